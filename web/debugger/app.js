/* The turn debugger page: plain JS, no build. Data only through authenticated GraphQL. */
(function () {
  'use strict';
  var KEY = 'ct-debugger-token';
  var $ = function (id) {
    return document.getElementById(id);
  };
  var state = {
    token: sessionStorage.getItem(KEY),
    client: null,
    unsubscribe: null,
    lastSeq: null,
    seen: new Set(),
    turns: new Map(),
    calls: new Map(),
    retry: 0,
  };

  function gql(query, variables) {
    return fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' + state.token },
      body: JSON.stringify({ query: query, variables: variables || {} }),
    })
      .then(function (res) {
        if (res.status === 401) throw new Error('The token was refused.');
        return res.json();
      })
      .then(function (body) {
        if (body.errors && body.errors.length) throw new Error(body.errors[0].message);
        return body.data;
      });
  }

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function setConn(on, text) {
    var c = $('conn');
    c.className = 'conn ' + (on ? 'on' : 'off');
    c.textContent = text;
  }

  function signedIn() {
    $('signin').hidden = true;
    $('pick').hidden = false;
    $('signout').hidden = false;
    $('explorer').hidden = false;
    pickers.workspace.reset().then(loadAssistants).catch(signInFailed);
  }

  function signInFailed(err) {
    sessionStorage.removeItem(KEY);
    state.token = null;
    $('signin').hidden = false;
    $('pick').hidden = true;
    $('signin-error').textContent = err.message;
  }

  var PAGE = 100;
  /** Most pages a search reads on one keystroke before it asks for "More". */
  var SEARCH_PAGES = 10;

  /**
   * A select that pages through a connection 100 at a time ("More") and narrows to what matches
   * its find box; a search that matches nothing loaded reads further pages, a few at a time.
   */
  function picker(name, query, nodesOf) {
    var select = $(name);
    var find = $(name + '-find');
    var more = $(name + '-more');
    var p = { items: [], cursor: null, hasNext: false, generation: 0 };

    function matches(it) {
      var q = find.value.trim().toLowerCase();
      return !q || it.name.toLowerCase().indexOf(q) >= 0 || it.id.toLowerCase() === q;
    }

    function render() {
      var keep = select.value;
      select.textContent = '';
      var shown = p.items.filter(matches);
      shown.forEach(function (it) {
        var o = el('option', null, it.name);
        o.value = it.id;
        select.appendChild(o);
      });
      if (
        shown.some(function (it) {
          return it.id === keep;
        })
      )
        select.value = keep;
      more.hidden = !p.hasNext;
      more.textContent = 'More (' + p.items.length + ' loaded)';
      return keep !== select.value;
    }

    function page() {
      var generation = p.generation;
      return gql(query, { first: PAGE, after: p.cursor, parent: p.parent }).then(function (d) {
        if (generation !== p.generation) return false;
        var conn = nodesOf(d);
        p.items = p.items.concat(conn.nodes);
        p.cursor = conn.pageInfo.endCursor;
        p.hasNext = conn.pageInfo.hasNextPage;
        return true;
      });
    }

    /** Reads pages until something matches the find box (or SEARCH_PAGES were read). */
    function seek(left) {
      if (p.items.some(matches) || !p.hasNext || left <= 0) return Promise.resolve();
      return page().then(function (fresh) {
        if (fresh) return seek(left - 1);
      });
    }

    function changed() {
      if (render()) select.dispatchEvent(new Event('change'));
    }

    p.reset = function (parent) {
      p.generation++;
      p.items = [];
      p.cursor = null;
      p.hasNext = false;
      p.parent = parent;
      find.value = '';
      return page().then(render);
    };
    more.addEventListener('click', function () {
      page().then(changed).catch(showError);
    });
    var typing = null;
    find.addEventListener('input', function () {
      clearTimeout(typing);
      typing = setTimeout(function () {
        seek(SEARCH_PAGES).then(changed).catch(showError);
      }, 250);
    });
    return p;
  }

  function showError(err) {
    $('signin-error').textContent = err.message;
  }

  var pickers = {
    workspace: picker(
      'workspace',
      'query($first: Int, $after: String) { workspaces(first: $first, after: $after) { nodes { id name } pageInfo { endCursor hasNextPage } } }',
      function (d) {
        return d.workspaces;
      },
    ),
    assistant: picker(
      'assistant',
      'query($parent: ID!, $first: Int, $after: String) { workspace(id: $parent) { assistants(first: $first, after: $after) { nodes { id name } pageInfo { endCursor hasNextPage } } } }',
      function (d) {
        return d.workspace.assistants;
      },
    ),
  };

  function loadAssistants() {
    var ws = $('workspace').value;
    if (!ws) return;
    pickers.assistant.reset(ws).then(watch).catch(showError);
  }

  var EVENTS =
    'subscription($a: ID, $c: String, $s: Float) { turnEvents(assistantId: $a, conversationId: $c, afterSeq: $s) {' +
    ' seq type turnId conversationId at dialect leftOut { name operationKey code reason }' +
    ' call { seq name operationKey risk status durationMs attempts message arguments modelArguments' +
    ' result { content structuredContent truncated } progress { kind atMs progress total level message } } } }';
  /** The TURN_STARTED event carries the first LEFT_OUT_IN_EVENT left-out tools; Turn.leftOut has all. */
  var LEFT_OUT_IN_EVENT = 10;
  var TURN_LEFT_OUT = 'query($id: ID!) { turn(id: $id) { leftOut { name operationKey code reason } } }';

  function reset() {
    if (state.unsubscribe) state.unsubscribe();
    state.unsubscribe = null;
    state.lastSeq = 0;
    state.seen = new Set();
    state.turns = new Map();
    state.calls = new Map();
    queue = [];
    $('turns').textContent = '';
    showCount();
  }

  function watch() {
    reset();
    subscribe();
  }

  function ensureClient() {
    if (state.client) return state.client;
    var url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/graphql';
    state.client = graphqlWs.createClient({
      url: url,
      connectionParams: { authorization: 'Bearer ' + state.token },
      retryAttempts: 0,
      lazy: true,
      on: {
        connected: function () {
          state.retry = 0;
          setConn(true, 'live');
        },
        closed: function () {
          setConn(false, 'reconnecting…');
        },
      },
    });
    return state.client;
  }

  /** Subscribes from the last seq seen: replay fills any gap, seen seqs are skipped. */
  function subscribe() {
    var assistant = $('assistant').value;
    if (!assistant) return;
    var vars = { a: assistant, c: null, s: state.lastSeq };
    var done = false;
    var again = function () {
      if (done) return;
      done = true;
      state.unsubscribe = null;
      if (state.client) {
        state.client.dispose();
        state.client = null;
      }
      var wait = Math.min(10000, 250 * Math.pow(2, state.retry++));
      setTimeout(subscribe, wait);
    };
    state.unsubscribe = ensureClient().subscribe(
      { query: EVENTS, variables: vars },
      {
        next: function (v) {
          if (v.data) onEvent(v.data.turnEvents);
        },
        error: again,
        complete: again,
      },
    );
  }

  /**
   * Events are queued and applied once per frame: a burst (a replay of thousands, or a call's
   * started, progress and finished in quick succession) costs one DOM update per call and frame.
   */
  var queue = [];
  var flushing = false;
  function onEvent(e) {
    queue.push(e);
    if (flushing) return;
    flushing = true;
    var flush = function () {
      if (!flushing) return;
      flushing = false;
      var batch = queue;
      queue = [];
      apply(batch);
    };
    requestAnimationFrame(flush);
    setTimeout(flush, 250); // a hidden tab gets no frames; keep up anyway
  }

  function apply(batch) {
    var dirty = new Set();
    var before = state.calls.size;
    batch.forEach(function (e) {
      var c = take(e);
      if (c) dirty.add(c);
    });
    dirty.forEach(renderCall);
    if (state.calls.size !== before) showCount();
  }

  /** Applies one event to the model; returns the call it changed, if any. */
  function take(e) {
    if (state.seen.has(e.seq)) return null;
    state.seen.add(e.seq);
    if (e.seq > state.lastSeq) state.lastSeq = e.seq;
    var turn = turnBox(e);
    if (e.type === 'TURN_STARTED') showTurnStart(turn, e);
    if (e.type === 'TURN_FINISHED') turn.querySelector('.state').textContent = 'finished';
    if (!e.call) return null;
    var key = e.turnId + ':' + e.call.seq;
    var c = state.calls.get(key);
    if (!c) {
      c = { el: el('div', 'call'), data: { progress: [] } };
      c.el.dataset.seq = e.call.seq;
      state.calls.set(key, c);
      turn.appendChild(c.el);
    }
    var d = c.data;
    ['name', 'status', 'durationMs', 'attempts', 'message', 'operationKey'].forEach(function (k) {
      if (e.call[k] !== null && e.call[k] !== undefined) d[k] = e.call[k];
    });
    if (e.call.arguments) d.arguments = e.call.arguments;
    if (e.call.modelArguments) d.modelArguments = e.call.modelArguments;
    if (e.call.result) d.result = e.call.result;
    if (e.type === 'CALL_PROGRESS' && e.call.progress) d.progress.push(e.call.progress);
    if (e.type === 'CALL_FINISHED' && !e.call.status) d.status = 'FINISHED';
    return c;
  }

  /** The conversation filter works on what is loaded (every turn since afterSeq 0): no new query. */
  function conversationFilter() {
    return $('conversation').value.trim().toLowerCase();
  }

  function filterTurn(t) {
    var q = conversationFilter();
    t.hidden = q !== '' && t.dataset.conversation.toLowerCase().indexOf(q) < 0;
  }

  function showCount() {
    var total = state.calls.size;
    var text = total + (total === 1 ? ' call' : ' calls');
    if (conversationFilter()) {
      var shown = 0;
      state.turns.forEach(function (t) {
        if (!t.hidden) shown += t.querySelectorAll('.call').length;
      });
      text += ', ' + shown + ' shown';
    }
    $('count').textContent = text;
  }

  function turnBox(e) {
    var t = state.turns.get(e.turnId);
    if (t) return t;
    t = el('section', 'turn');
    t.dataset.conversation = e.conversationId;
    filterTurn(t);
    var h = el('h2');
    h.appendChild(el('span', null, 'Conversation ' + e.conversationId));
    h.appendChild(el('span', 'muted', new Date(e.at).toLocaleTimeString()));
    h.appendChild(el('span', 'muted dialect'));
    h.appendChild(el('span', 'muted state', 'open'));
    t.appendChild(h);
    state.turns.set(e.turnId, t);
    $('turns').prepend(t);
    return t;
  }

  /**
   * The dialect the turn's tools were declared for, and the tools that dialect's API would refuse
   * (left out, never sent): name, operation key and why, every piece as text. The event holds the
   * first LEFT_OUT_IN_EVENT; opening a list that long reads the whole one from Turn.leftOut.
   */
  function showTurnStart(t, e) {
    if (e.dialect && e.dialect !== 'GENERIC') t.querySelector('.dialect').textContent = e.dialect;
    var left = e.leftOut || [];
    if (!left.length || t.querySelector('.left-out')) return;
    var det = el('details', 'left-out');
    var capped = left.length >= LEFT_OUT_IN_EVENT;
    det.appendChild(el('summary', null, 'left out (' + left.length + (capped ? '+' : '') + ')'));
    var list = el('ul');
    var fill = function (items) {
      list.textContent = '';
      items.forEach(function (l) {
        var li = el('li');
        li.appendChild(el('span', 'name', l.name));
        if (l.operationKey) li.appendChild(el('span', 'muted key', l.operationKey));
        li.appendChild(el('span', 'reason', l.code + ': ' + l.reason));
        list.appendChild(li);
      });
      det.querySelector('summary').textContent = 'left out (' + items.length + ')';
    };
    fill(left);
    if (capped) det.querySelector('summary').textContent = 'left out (' + left.length + '+)';
    det.appendChild(list);
    var loaded = !capped;
    det.addEventListener('toggle', function () {
      if (!det.open || loaded) return;
      loaded = true;
      gql(TURN_LEFT_OUT, { id: e.turnId })
        .then(function (d) {
          if (d.turn) fill(d.turn.leftOut);
        })
        .catch(showError);
    });
    t.querySelector('h2').after(det);
  }

  function pretty(v) {
    return JSON.stringify(v, null, 2);
  }

  function renderCall(c) {
    var d = c.data;
    var box = c.el;
    box.textContent = '';
    box.dataset.status = d.status || '';
    var row = el('div', 'row');
    row.appendChild(el('span', 'seq', '#' + box.dataset.seq));
    row.appendChild(el('span', 'name', d.name));
    row.appendChild(el('span', 'status ' + (d.status || ''), d.status));
    if (d.durationMs !== undefined) row.appendChild(el('span', 'muted', d.durationMs + ' ms'));
    if (d.attempts !== undefined)
      row.appendChild(el('span', 'muted', d.attempts + (d.attempts === 1 ? ' attempt' : ' attempts')));
    box.appendChild(row);
    if (d.message) box.appendChild(el('div', 'message', d.message));
    if (d.progress.length) {
      var ul = el('ul', 'progress');
      d.progress.forEach(function (p) {
        var text =
          p.kind === 'PROGRESS'
            ? 'progress ' +
              p.progress +
              (p.total !== null ? '/' + p.total : '') +
              (p.message ? ' — ' + p.message : '')
            : (p.level || 'log') + ': ' + (p.message || '');
        ul.appendChild(el('li', null, '+' + p.atMs + ' ms  ' + text));
      });
      box.appendChild(ul);
    }
    if (d.arguments)
      box.appendChild(
        block(c, 'arguments', 'arguments', function () {
          return pretty(d.arguments);
        }),
      );
    // What the model wrote in the turn's dialect, when mapping it back changed it (names, nulls, JSON text).
    if (d.modelArguments)
      box.appendChild(
        block(c, 'modelArguments', 'model arguments', function () {
          return pretty(d.modelArguments);
        }),
      );
    if (d.result) {
      box.appendChild(
        block(c, 'result', 'result' + (d.result.truncated ? ' (cut)' : ''), function () {
          return pretty({ content: d.result.content, structuredContent: d.result.structuredContent });
        }),
      );
    }
  }

  /**
   * A collapsible block that stays open across the call's updates once the person opened it. Its
   * text is formatted when it is first opened: a thousand closed calls format nothing.
   */
  function block(c, key, title, text) {
    var det = el('details');
    var pre = null;
    var fill = function () {
      if (!pre && det.open) pre = det.appendChild(el('pre', null, text()));
    };
    c.open = c.open || {};
    det.appendChild(el('summary', null, title));
    det.open = !!c.open[key];
    fill();
    det.addEventListener('toggle', function () {
      c.open[key] = det.open;
      fill();
    });
    return det;
  }

  $('signin').addEventListener('submit', function (ev) {
    ev.preventDefault();
    state.token = $('token').value.trim();
    $('token').value = '';
    sessionStorage.setItem(KEY, state.token);
    $('signin-error').textContent = '';
    signedIn();
  });
  $('signout').addEventListener('click', function () {
    sessionStorage.removeItem(KEY);
    location.reload();
  });
  $('workspace').addEventListener('change', loadAssistants);
  $('assistant').addEventListener('change', watch);
  $('conversation').addEventListener('input', function () {
    state.turns.forEach(filterTurn);
    showCount();
  });
  // Tests and people can drop the socket to see the page resume.
  window.ctDebugger = {
    dropSocket: function () {
      if (state.client) state.client.terminate();
    },
    lastSeq: function () {
      return state.lastSeq;
    },
  };
  if (state.token) signedIn();
})();
