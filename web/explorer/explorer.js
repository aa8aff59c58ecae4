/*
 * The explorer: GraphiQL with the token from the debugger page's sign-in (this tab's session
 * storage) prefilled in the Authorization header. Queries and mutations go as POST with JSON (so
 * CSRF prevention is not in the way), subscriptions over graphql-ws with the header's token in
 * connection_init. GraphiQL keeps its tabs in session storage too, and never the headers.
 */
(function () {
  'use strict';
  var TOKEN_KEY = 'ct-debugger-token';
  var token = sessionStorage.getItem(TOKEN_KEY);
  var gql = GraphiQL.GraphQL;
  var wsUrl = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/graphql';
  /** One graphql-ws client per Authorization value, so editing the header takes effect. */
  var sockets = new Map();

  function authorization(headers) {
    if (!headers) return null;
    for (var k in headers) if (k.toLowerCase() === 'authorization') return String(headers[k]);
    return null;
  }

  function isSubscription(params) {
    try {
      var op = gql.getOperationAST(gql.parse(params.query), params.operationName || undefined);
      return !!op && op.operation === 'subscription';
    } catch (e) {
      return false; // the server says what is wrong with the document
    }
  }

  function post(params, headers) {
    var h = { 'content-type': 'application/json', accept: 'application/json' };
    for (var k in headers || {}) h[k] = headers[k];
    return fetch('/graphql', { method: 'POST', headers: h, body: JSON.stringify(params) })
      .then(function (res) {
        return res.text();
      })
      .then(function (text) {
        try {
          return JSON.parse(text);
        } catch (e) {
          return { errors: [{ message: text || 'the server sent an empty answer' }] };
        }
      });
  }

  function socketFor(auth) {
    var client = sockets.get(auth);
    if (client) return client;
    client = graphqlWs.createClient({
      url: wsUrl,
      connectionParams: auth ? { authorization: auth } : {},
      lazy: true,
      retryAttempts: 0,
    });
    sockets.set(auth, client);
    return client;
  }

  function closed(e) {
    if (e && typeof e.code === 'number') {
      var why = e.code === 4403 ? 'the token was refused' : e.reason || 'the socket closed';
      return new Error(why + ' (' + e.code + ')');
    }
    return e instanceof Error ? e : new Error(String(e));
  }

  function subscribe(params, auth) {
    return {
      subscribe: function (observer) {
        var dispose = socketFor(auth).subscribe(params, {
          next: function (v) {
            observer.next(v);
          },
          error: function (e) {
            if (Array.isArray(e)) {
              observer.next({ errors: e });
              observer.complete();
            } else {
              sockets.delete(auth);
              observer.error(closed(e));
            }
          },
          complete: function () {
            observer.complete();
          },
        });
        return { unsubscribe: dispose };
      },
    };
  }

  function fetcher(params, opts) {
    var headers = (opts && opts.headers) || {};
    if (isSubscription(params)) return subscribe(params, authorization(headers));
    return post(params, headers);
  }

  var headers = JSON.stringify({ Authorization: 'Bearer ' + (token || '') }, null, 2);
  var intro = token
    ? '# Your token from /debugger is in Headers, below.\n'
    : '# No token in this tab: sign in on /debugger, or put yours in Headers.\n';
  var h = React.createElement;
  var root = ReactDOM.createRoot(document.getElementById('explorer'));
  root.render(
    h(
      GraphiQL,
      {
        fetcher: fetcher,
        storage: window.sessionStorage,
        shouldPersistHeaders: false,
        headers: headers,
        defaultHeaders: headers,
        defaultEditorToolsVisibility: 'headers',
        defaultQuery: intro + '{\n  viewer {\n    role\n    label\n  }\n}\n',
      },
      h(
        GraphiQL.Logo,
        null,
        'Connected tools',
        h('a', { className: 'ct-explorer-link', href: '/debugger' }, 'debugger'),
      ),
    ),
  );
})();
