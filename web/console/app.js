/* The ops console page (issue 28): plain JS, no build. Data and actions only through authenticated GraphQL. */
(function () {
  'use strict';
  var KEY = 'ct-console-token';
  var SVG = 'http://www.w3.org/2000/svg';
  var $ = function (id) { return document.getElementById(id); };
  var state = { token: sessionStorage.getItem(KEY), role: null, open: null };

  function gql(query, variables) {
    return fetch('/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' + state.token },
      body: JSON.stringify({ query: query, variables: variables || {} }),
    }).then(function (res) {
      if (res.status === 401) throw new Error('The token was refused.');
      return res.json();
    }).then(function (body) {
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
  function cell(row, text, cls) { var td = el('td', cls, text); row.appendChild(td); return td; }
  function button(text, onClick, cls) {
    var b = el('button', cls, text);
    b.type = 'button';
    b.addEventListener('click', onClick);
    return b;
  }
  function showError(err) { $('error').hidden = false; $('error').textContent = err.message || String(err); }
  function ms(v) { return v === null || v === undefined ? '–' : Math.round(v) + ' ms'; }
  function pct(v) { return (v * 100).toFixed(1) + ' %'; }
  function json(v) { return v === null || v === undefined ? '(none)' : JSON.stringify(v, null, 1); }
  function when(iso) { return iso ? new Date(iso).toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '–'; }
  function windowArg() { return $('window').value; }

  var DIFF = 'path kind before after breaking';
  var QUEUE = 'query { reviewQueue(first: 50) { totalCount nodes { id key name risk reviewVersion connection { name }' +
    ' reviewReasons(open: true, first: 20) { nodes { code detail } } reviewDiff { ' + DIFF + ' } } } }';
  var CONNECTIONS = 'query($w: HealthWindow!) { workspaces(first: 100) { nodes { name connections(first: 100) { nodes {' +
    ' id name kind status health(window: $w) { calls errors errorRate p95DurationMs signIn' +
    ' lastDiscovery { outcome partial finishedAt startedAt errorCode } } } } } } }';
  var DETAIL = 'query($id: ID!, $w: HealthWindow!) { connection(id: $id) { id name operations(first: 100) { nodes {' +
    ' id key name risk enabled needsReview health(window: $w) { from to calls errors p95DurationMs declaredBy points { start calls errors } } } }' +
    ' discoveryRuns(first: 5) { nodes { id startedAt outcome trigger added updated removed flagged' +
    ' changes(first: 100) { nodes { kind operationName breaking entries { ' + DIFF + ' } } } } } } }';

  /** The risk change in words, from a diff's `risk` entry. */
  function riskWords(entries) {
    var r = entries.filter(function (e) { return e.path === 'risk'; })[0];
    if (!r) return 'The risk stays as it was.';
    if (r.breaking) return 'The risk goes up from ' + r.before + ' to ' + r.after + ': every call will leave a ledger row, and the tool may change data.';
    return 'The risk goes down from ' + r.before + ' to ' + r.after + '.';
  }

  function diffTable(entries) {
    var t = el('table', 'diff');
    var head = el('tr');
    ['Where', 'Change', 'Before', 'After'].forEach(function (h) { head.appendChild(el('th', null, h)); });
    t.appendChild(head);
    entries.forEach(function (e) {
      var row = el('tr', e.breaking ? 'breaking' : null);
      row.dataset.path = e.path;
      cell(row, e.path, 'name');
      var kind = cell(row, e.kind.toLowerCase().replace(/_/g, ' '));
      if (e.breaking) kind.appendChild(el('span', 'badge', 'breaking'));
      cell(row).appendChild(el('pre', 'before', json(e.before)));
      cell(row).appendChild(el('pre', 'after', json(e.after)));
      t.appendChild(row);
    });
    return t;
  }

  function renderQueue(q) {
    $('queue-count').textContent = '(' + q.totalCount + ')';
    var box = $('queue');
    box.textContent = '';
    var admin = state.role === 'ADMIN';
    $('queue-note').hidden = admin;
    $('queue-note').textContent = admin ? '' : 'You are signed in as ' + state.role +
      ': you can read the queue, but only an ADMIN can approve or reject a review.';
    if (q.nodes.length === 0) box.appendChild(el('p', 'muted', 'Nothing is waiting for a review.'));
    q.nodes.forEach(function (op) {
      var card = el('article', 'review');
      card.dataset.key = op.key;
      var h = el('h3', null, op.name);
      h.appendChild(el('span', 'muted', ' ' + op.connection.name + ' · ' + op.key));
      card.appendChild(h);
      var reasons = el('ul', 'reasons');
      op.reviewReasons.nodes.forEach(function (r) { reasons.appendChild(el('li', null, r.code + ': ' + r.detail)); });
      card.appendChild(reasons);
      card.appendChild(el('p', 'risk', riskWords(op.reviewDiff)));
      var breaking = op.reviewDiff.filter(function (e) { return e.breaking; }).length;
      card.appendChild(el('p', 'muted', op.reviewDiff.length + ' change(s), ' + breaking + ' breaking'));
      card.appendChild(diffTable(op.reviewDiff));
      var actions = el('div', 'actions');
      var note = el('input');
      note.placeholder = 'why (for a rejection)';
      note.className = 'note-input';
      var approve = button('Approve', function () { decide('approveReview', op, null); }, 'approve');
      var reject = button('Reject', function () {
        if (!note.value.trim()) { showError(new Error('Say why the review is rejected.')); return; }
        decide('rejectReview', op, note.value.trim());
      }, 'reject');
      approve.disabled = reject.disabled = note.disabled = !admin;
      if (!admin) approve.title = reject.title = 'Only an ADMIN can decide a review';
      actions.appendChild(approve);
      actions.appendChild(note);
      actions.appendChild(reject);
      card.appendChild(actions);
      box.appendChild(card);
    });
  }

  function decide(mutation, op, reason) {
    var input = { operationId: op.id, version: op.reviewVersion };
    if (reason !== null) input.reason = reason;
    var type = mutation === 'approveReview' ? 'ApproveReviewInput' : 'RejectReviewInput';
    gql('mutation($i: ' + type + '!) { ' + mutation + '(input: $i) { userErrors { message code } } }', { i: input })
      .then(function (d) {
        var errs = d[mutation].userErrors;
        if (errs.length) showError(new Error(errs[0].message));
        return load();
      }).catch(showError);
  }

  function renderConnections(workspaces) {
    var body = $('connections').querySelector('tbody');
    body.textContent = '';
    workspaces.nodes.forEach(function (w) {
      w.connections.nodes.forEach(function (c) {
        var h = c.health;
        var row = el('tr');
        row.dataset.connection = c.name;
        cell(row, c.name + ' ').appendChild(el('span', 'muted', w.name + ' · ' + c.kind));
        var status = cell(row, c.status + (h.signIn ? ' · ' + h.signIn.toLowerCase().replace(/_/g, ' ') : ''), 'status ' + c.status);
        status.title = 'the connection status as the last discovery left it';
        cell(row, h.calls);
        cell(row, pct(h.errorRate), h.errorRate > 0.05 ? 'bad' : null);
        cell(row, ms(h.p95DurationMs));
        var d = h.lastDiscovery;
        cell(row, d ? d.outcome + (d.partial ? ' (partial)' : '') + ' · ' + when(d.finishedAt || d.startedAt) : 'never');
        cell(row).appendChild(button('Open', function () { state.open = c.id; load(); }, 'open'));
        body.appendChild(row);
      });
    });
  }

  /** Calls (bars) and errors (red bars on top) per hour of the window, as inline SVG. */
  function chart(health) {
    var width = 160, height = 32;
    var svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
    svg.setAttribute('width', width);
    svg.setAttribute('height', height);
    svg.setAttribute('class', 'chart');
    svg.setAttribute('role', 'img');
    var from = new Date(health.from).getTime();
    var hours = Math.max(1, Math.round((new Date(health.to).getTime() - from) / 3600000));
    var max = health.points.reduce(function (m, p) { return Math.max(m, p.calls); }, 1);
    var w = width / hours;
    health.points.forEach(function (p) {
      var i = Math.round((new Date(p.start).getTime() - from) / 3600000);
      [['calls', p.calls], ['errors', p.errors]].forEach(function (pair) {
        if (pair[1] === 0) return;
        var r = document.createElementNS(SVG, 'rect');
        var h = Math.max(1, (pair[1] / max) * height);
        r.setAttribute('x', (i * w).toFixed(2));
        r.setAttribute('y', (height - h).toFixed(2));
        r.setAttribute('width', Math.max(1, w - 0.5).toFixed(2));
        r.setAttribute('height', h.toFixed(2));
        r.setAttribute('class', pair[0]);
        svg.appendChild(r);
      });
    });
    var title = document.createElementNS(SVG, 'title');
    title.textContent = health.calls + ' calls, ' + health.errors + ' errors';
    svg.appendChild(title);
    return svg;
  }

  function renderDetail(c) {
    $('detail').hidden = false;
    var t = $('detail-title');
    t.textContent = c.name + ' ';
    t.appendChild(button('Re-discover', function () {
      gql('mutation($i: DiscoverInput!) { discover(input: $i) { run { outcome errorMessage } } }', { i: { connectionId: c.id } })
        .then(function (d) { if (d.discover.run && d.discover.run.outcome !== 'SUCCEEDED') showError(new Error(d.discover.run.errorMessage)); return load(); })
        .catch(showError);
    }, 'rediscover'));
    var body = $('operations').querySelector('tbody');
    body.textContent = '';
    c.operations.nodes.forEach(function (op) {
      var row = el('tr');
      row.dataset.operation = op.name;
      row.dataset.enabled = String(op.enabled);
      cell(row, op.name, 'name').title = op.key;
      cell(row, op.risk, 'risk-' + op.risk);
      var sw = cell(row, op.needsReview ? 'held for review ' : op.enabled ? 'on ' : 'off ');
      sw.appendChild(button(op.enabled ? 'Disable' : 'Enable', function () {
        var m = op.enabled ? 'disable' : 'enable';
        var input = op.enabled ? { operationId: op.id, reason: 'incident switch (ops console)' } : { operationId: op.id };
        var type = op.enabled ? 'DisableInput' : 'EnableInput';
        gql('mutation($i: ' + type + '!) { ' + m + '(input: $i) { userErrors { message } } }', { i: input })
          .then(function (d) { if (d[m].userErrors.length) showError(new Error(d[m].userErrors[0].message)); return load(); })
          .catch(showError);
      }, 'switch'));
      cell(row, op.health.calls);
      cell(row, op.health.errors, op.health.errors > 0 ? 'bad' : null);
      cell(row, ms(op.health.p95DurationMs));
      cell(row, op.health.declaredBy);
      cell(row).appendChild(chart(op.health));
      body.appendChild(row);
    });
    var runs = $('runs');
    runs.textContent = '';
    c.discoveryRuns.nodes.forEach(function (r) {
      var d = el('details', 'run');
      d.appendChild(el('summary', null, when(r.startedAt) + ' · ' + r.trigger + ' · ' + r.outcome + ' · +' + r.added + ' ~' + r.updated + ' −' + r.removed + ' held ' + r.flagged));
      var list = el('ul');
      r.changes.nodes.forEach(function (ch) {
        var li = el('li', ch.breaking ? 'breaking' : null, ch.kind + ' ' + ch.operationName + (ch.entries.length ? ': ' + ch.entries.map(function (e) { return e.path + (e.breaking ? ' (breaking)' : ''); }).join(', ') : ''));
        list.appendChild(li);
      });
      d.appendChild(list);
      runs.appendChild(d);
    });
  }

  function loadDetail() {
    if (!state.open) return Promise.resolve();
    return gql(DETAIL, { id: state.open, w: windowArg() }).then(function (d) { renderDetail(d.connection); });
  }

  function load() {
    $('error').hidden = true;
    return Promise.all([
      gql(QUEUE).then(function (d) { renderQueue(d.reviewQueue); }),
      gql(CONNECTIONS, { w: windowArg() }).then(function (d) { renderConnections(d.workspaces); }),
      loadDetail(),
    ]).then(function () { document.body.dataset.loaded = String(Date.now()); }).catch(showError);
  }

  function signedIn() {
    return gql('query { viewer { role label } }').then(function (d) {
      if (d.viewer.role !== 'ADMIN' && d.viewer.role !== 'OPERATOR') throw new Error('The ops console is for ADMIN and OPERATOR tokens; this one is ' + d.viewer.role + '.');
      state.role = d.viewer.role;
      $('who').textContent = d.viewer.label + ' (' + d.viewer.role + ')';
      $('signin').hidden = true;
      $('main').hidden = false;
      $('signout').hidden = false;
      $('refresh').hidden = false;
      return load();
    });
  }

  function signInFailed(err) {
    sessionStorage.removeItem(KEY);
    state.token = null;
    $('signin').hidden = false;
    $('main').hidden = true;
    $('signin-error').textContent = err.message;
  }

  $('signin').addEventListener('submit', function (e) {
    e.preventDefault();
    state.token = $('token').value.trim();
    sessionStorage.setItem(KEY, state.token);
    signedIn().catch(signInFailed);
  });
  $('signout').addEventListener('click', function () { sessionStorage.removeItem(KEY); location.reload(); });
  $('refresh').addEventListener('click', load);
  $('window').addEventListener('change', load);
  if (state.token) signedIn().catch(signInFailed);
})();
