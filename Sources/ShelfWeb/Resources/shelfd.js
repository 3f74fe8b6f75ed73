// shelfd's one script: keys, live updates and upload on top of pages that work without it.

// --- review keys ---
// The terminal walk's keys on /review/{id}: a accept, 1–9 a candidate, e edit, r reject, s skip. Each submits
// the form its button is in (a plain POST that redirects to the next book); keys typed into a field are the field's.
{
    const review = document.querySelector('[data-review]');
    if (review) {
        let sent = false;
        window.addEventListener('pageshow', () => { sent = false; });      // back to a page kept in the cache
        document.addEventListener('keydown', (event) => {
            if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
            const target = event.target;
            if (target instanceof Element && target.closest('input, textarea, select, [contenteditable]')) {
                if (event.key === 'Escape') target.blur();                // leave the field: keys work again
                return;
            }
            const key = event.key.toLowerCase();
            if (key === 'e') {
                event.preventDefault();
                const title = review.querySelector('[data-review-edit] input[name=title]');
                title?.focus();
                title?.setSelectionRange(title.value.length, title.value.length);   // type on after what was read
                return;
            }
            const form = review.querySelector(`form[data-key="${CSS.escape(key)}"]`);
            if (!form) {
                const note = review.querySelector('[data-review-note]');
                if (note && /^[1-9]$/.test(key)) {
                    note.textContent = `No candidate ${key}.`;
                    note.hidden = false;
                }
                return;
            }
            event.preventDefault();
            if (sent) return;                                             // one decision per page
            sent = true;
            form.requestSubmit();
        });
    }
}
// --- end review keys ---

// --- photo review ---
// /photos/{sha}/review: one item selected at a time (j/k, arrows, or a tap on its box); a, 1–9, r and e decide it
// through /api/v1 and the next open item is selected; s skips; x marks items for the decisions for many, which are
// shown before they are applied; u takes back the last decision while its minute lasts; n goes to the next photo.
{
  const page = document.querySelector('[data-photo-review]');
  if (page) {
    page.classList.add('scripted');                                // only the selected item's buttons show
    const token = document.querySelector('meta[name="csrf-token"]')?.content ?? '';
    const note = page.querySelector('[data-review-note]');
    const undoBar = page.querySelector('[data-undo]');
    const bulk = page.querySelector('[data-bulk]');
    const plan = page.querySelector('[data-plan]');
    const items = [...page.querySelectorAll('[data-item]')];
    const boxOf = (item) => page.querySelector(`[data-box="${CSS.escape(item.dataset.item)}"]`);
    const open = () => items.filter((item) => !item.hidden);
    let selected = null;
    let lastUndo = null;
    let planned = null;

    const say = (text) => { note.textContent = text; note.hidden = !text; };
    const post = async (path, body) => {
      const answer = await fetch(path, {
        method: 'POST', body: JSON.stringify(body),
        headers: { 'Content-Type': 'application/json', 'Accept': 'application/json', 'X-CSRF-Token': token },
      });
      let json = {};
      try { json = await answer.json(); } catch { /* no body */ }
      return { ok: answer.ok, status: answer.status, json };
    };

    const select = (item, scroll = true) => {
      for (const other of items) {
        other.classList.toggle('selected', other === item);
        boxOf(other)?.classList.toggle('selected', other === item);
      }
      selected = item;
      if (item && scroll) item.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
    };
    const move = (step) => {
      const left = open();
      if (left.length === 0) return;
      const at = left.indexOf(selected);
      select(left[(at + step + left.length) % left.length]);
    };
    const counts = (change) => {
      for (const key of ['left', 'photoLeft']) {
        const element = page.querySelector(key === 'left' ? '[data-left]' : '[data-photo-left]');
        element.textContent = String(Math.max(0, Number(element.textContent) + change));
      }
      const done = open().length === 0;
      page.querySelector('[data-done]').hidden = !done;
      if (bulk) bulk.hidden = done;
    };
    // Decided items are hidden, not removed: an undo shows them again.
    const settle = (decided) => {
      const left = open();
      const after = left.slice(left.indexOf(decided[0]) + 1).filter((item) => !decided.includes(item));
      for (const item of decided) {
        item.hidden = true;
        boxOf(item)?.classList.add('decided');
        const mark = item.querySelector('[data-mark]');
        if (mark) mark.checked = false;
      }
      counts(-decided.length);
      select(after[0] ?? open()[0] ?? null);
      say('');
    };

    // A decision shows at once and the next item is selected; the requests go one after another behind it, so
    // keys typed quickly are all kept. One the server refuses brings its item back, with the reason.
    let queue = Promise.resolve();
    const later = (task) => { queue = queue.then(task).catch(() => say('The server did not answer; try again.')); };
    const reveal = (items) => {
      for (const item of items) {
        item.hidden = false;
        boxOf(item)?.classList.remove('decided');
      }
      counts(items.length);
    };
    const decide = (item, body, what) => {
      if (!item || item.hidden) return;
      const title = item.querySelector('.shelf-reading b').textContent;
      settle([item]);
      later(async () => {
        const answer = await post(`/api/v1/review/${encodeURIComponent(item.dataset.item)}`, body).catch(() => null);
        if (!answer) {
          reveal([item]);
          say(`The server did not answer: “${title}” is still open.`);
        } else if (answer.ok) {
          lastUndo = { token: answer.json.undo, items: [item] };
          undoBar.querySelector('[data-undo-text]').textContent = `${what}: “${title}”.`;
          undoBar.hidden = false;
        } else if (answer.status === 404) {
          say(`“${title}” was decided elsewhere meanwhile.`);
        } else {
          reveal([item]);
          select(item);
          say(answer.json.error?.message ?? `Refused (HTTP ${answer.status}).`);
        }
      });
    };
    const bodyOf = (form) => {
      const kind = form.dataset.decision;
      if (kind === 'candidate') return [{ decision: 'candidate', candidate: Number(form.dataset.number) }, `Candidate ${form.dataset.number}`];
      if (kind === 'edit') {
        const field = (name) => form.querySelector(`[name=${name}]`).value;
        const body = { decision: 'edit', title: field('title'), author: field('author') };
        if (field('isbn').trim()) body.isbn = field('isbn');
        return [body, 'Edited'];
      }
      return [{ decision: kind }, kind === 'accept' ? 'Accepted as read' : 'Not a book'];
    };

    const undo = () => later(async () => {
      if (!lastUndo) return;
      const taken = lastUndo;
      lastUndo = null;
      undoBar.hidden = true;
      const answer = await post('/api/v1/review/undo', { undo: taken.token });
      if (answer.ok) {
        const reopened = taken.items.filter((item) => answer.json.reopened.includes(item.dataset.item));
        reveal(reopened);
        select(reopened[0] ?? selected);
        say(`Taken back: ${reopened.length} open again.`);
      } else {
        say(answer.json.error?.message ?? 'Too late to undo.');
      }
    });

    // Decisions for many: the plan first, then applied as shown.
    const showPlan = async (button) => {
      const marked = open().filter((item) => item.querySelector('[data-mark]')?.checked);
      const request = { bulk: button.dataset.bulk };
      if (button.dataset.bulkScope === 'marked') {
        if (marked.length === 0) { say('Mark the spines first: x, or their “mark” box.'); return; }
        request.items = marked.map((item) => item.dataset.item);
      } else {
        request.below = Number(bulk.querySelector('[data-threshold]').value);
      }
      const answer = await post(`/api/v1/photos/${page.dataset.sha}/review`, request).catch(() => null);
      if (!answer?.ok) { say(answer?.json.error?.message ?? 'The server did not answer; try again.'); return; }
      if (answer.json.items.length === 0) { say('None of the spines fits that.'); return; }
      planned = { ...request, items: answer.json.items.map((item) => item.id), apply: true };
      plan.querySelector('[data-plan-text]').textContent =
        `${answer.json.items.length} spine${answer.json.items.length === 1 ? '' : 's'} will be decided:`;
      plan.querySelector('[data-plan-items]').replaceChildren(...answer.json.items.map((item) => {
        const row = document.createElement('li');
        row.textContent = `${item.title} → ${item.decision}`;
        return row;
      }));
      plan.hidden = false;
      plan.querySelector('[data-plan-apply]').focus();
    };
    const applyPlan = () => {
      if (!planned) return;
      const request = planned;
      planned = null;
      plan.hidden = true;
      const decided = items.filter((item) => request.items.includes(item.dataset.item) && !item.hidden);
      settle(decided);
      later(async () => {
        const answer = await post(`/api/v1/photos/${page.dataset.sha}/review`, request).catch(() => null);
        if (!answer?.ok) {
          reveal(decided);
          say(answer?.json.error?.message ?? 'The server did not answer: nothing was decided.');
          return;
        }
        lastUndo = { token: answer.json.undo, items: decided };
        undoBar.querySelector('[data-undo-text]').textContent = `${answer.json.items.length} decided at once.`;
        undoBar.hidden = false;
      });
    };
    const cancelPlan = () => { planned = null; plan.hidden = true; };

    if (bulk) {
      bulk.hidden = items.length === 0;
      for (const button of bulk.querySelectorAll('[data-bulk]')) {
        button.addEventListener('click', () => showPlan(button));
      }
      plan.querySelector('[data-plan-apply]').addEventListener('click', applyPlan);
      plan.querySelector('[data-plan-cancel]').addEventListener('click', cancelPlan);
    }
    undoBar.querySelector('[data-undo-button]').addEventListener('click', undo);

    for (const item of items) {
      item.addEventListener('click', (event) => {
        if (!event.target.closest('button, input, summary, a')) select(item, false);
      });
      for (const form of item.querySelectorAll('form[data-decision]')) {
        form.addEventListener('submit', (event) => {
          event.preventDefault();
          select(item, false);
          const [body, what] = bodyOf(form);
          decide(item, body, what);
        });
      }
    }
    for (const box of page.querySelectorAll('[data-box]')) {
      box.addEventListener('click', (event) => {
        event.preventDefault();
        const item = items.find((candidate) => candidate.dataset.item === box.dataset.box);
        if (item && !item.hidden) select(item);
      });
    }

    document.addEventListener('keydown', (event) => {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
      const target = event.target;
      if (target instanceof Element && target.closest('input:not([type=checkbox]), textarea, select, [contenteditable]')) {
        if (event.key === 'Escape') target.blur();
        return;
      }
      if (!plan.hidden) {
        if (event.key === 'Enter') { event.preventDefault(); applyPlan(); }
        if (event.key === 'Escape') { event.preventDefault(); cancelPlan(); }
        return;
      }
      const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
      const act = (body, what) => { event.preventDefault(); decide(selected, body, what); };
      switch (key) {
        case 'j': case 'ArrowDown': case 'ArrowRight': event.preventDefault(); move(1); return;
        case 'k': case 'ArrowUp': case 'ArrowLeft': event.preventDefault(); move(-1); return;
        case 's': event.preventDefault(); move(1); return;
        case 'a': act({ decision: 'accept' }, 'Accepted as read'); return;
        case 'r': act({ decision: 'reject' }, 'Not a book'); return;
        case 'u': event.preventDefault(); undo(); return;
        case 'n': {
          const next = page.querySelector('[data-next]');
          if (next) { event.preventDefault(); next.click(); }
          return;
        }
        case 'x': {
          const mark = selected?.querySelector('[data-mark]');
          if (mark) { event.preventDefault(); mark.checked = !mark.checked; move(1); }
          return;
        }
        case 'e': {
          const edit = selected?.querySelector('[data-edit]');
          if (!edit) return;
          event.preventDefault();
          edit.open = true;
          const title = edit.querySelector('input[name=title]');
          title.focus();
          title.setSelectionRange(title.value.length, title.value.length);
          return;
        }
      }
      if (/^[1-9]$/.test(key) && selected) {
        event.preventDefault();
        const form = selected.querySelector(`form[data-decision=candidate][data-number="${key}"]`);
        if (form) decide(selected, { decision: 'candidate', candidate: Number(key) }, `Candidate ${key}`);
        else say(`No candidate ${key} for this spine.`);
      }
    });

    select(open()[0] ?? null, false);
  }
}
// --- end photo review ---

// --- overview live ---
// The overview follows /events (server-sent events); where EventSource fails it polls /events?once=1.
{
    const overview = document.querySelector('[data-overview]');
    if (overview) {
        const live = overview.querySelector('[data-live]');
        const failedSeen = overview.dataset.failedSeen;

        const photoRow = (photo) => {
            const row = document.createElement('li');
            row.className = `stage-row stage-${photo.stage}`;
            row.dataset.stage = photo.stage;
            const link = document.createElement('a');
            link.href = `/photos/${encodeURIComponent(photo.sha256)}`;
            link.textContent = photo.path;
            const stage = document.createElement('span');
            stage.className = 'stage';
            stage.textContent = photo.words;
            const when = document.createElement('span');
            when.className = 'when';
            when.textContent = photo.when;
            row.append(link, ' ', stage, ' ', when);
            return row;
        };

        const render = (event) => {
            for (const [key, value] of Object.entries(event.counts)) {
                const count = overview.querySelector(`[data-count="${key}"]`);
                if (count) count.textContent = String(value);
                overview.querySelector(`[data-count-box="${key}"]`)?.classList.toggle('zero', value === 0);
            }
            const pass = overview.querySelector('[data-pass]');
            overview.querySelector('[data-idle]').hidden = Boolean(event.pass);
            pass.hidden = !event.pass;
            if (event.pass) {
                const bar = pass.querySelector('[data-pass-bar]');
                bar.max = Math.max(1, event.pass.total);
                bar.value = event.pass.finished;
                bar.textContent = `${event.pass.finished} of ${event.pass.total}`;
                pass.querySelector('[data-pass-text]').textContent = event.pass.sentence;
            }
            overview.querySelector('[data-photos]').replaceChildren(...event.photos.map(photoRow));
            overview.querySelector('[data-no-photos]').hidden = event.photos.length > 0;
            overview.querySelector('[data-stale]').hidden = `${event.counts.failed},${event.counts.dead}` === failedSeen;
        };

        let polling = null;
        const poll = async () => {
            try {
                const answer = await fetch('/events?once=1', { headers: { Accept: 'application/json' } });
                if (answer.ok) render(await answer.json());
            } catch (error) { /* the server is away: the next poll tries again */ }
        };
        const startPolling = () => {
            if (polling) return;
            live.textContent = 'Updating every 2 s.';
            poll();
            polling = setInterval(poll, 2000);
        };

        if ('EventSource' in window) {
            const source = new EventSource('/events');
            let failures = 0;
            source.addEventListener('open', () => { live.textContent = 'Live.'; });
            source.addEventListener('progress', (message) => {
                failures = 0;
                render(JSON.parse(message.data));
            });
            source.addEventListener('error', () => {
                failures += 1;
                if (source.readyState === EventSource.CLOSED || failures >= 3) {
                    source.close();
                    startPolling();
                }
            });
        } else {
            startPolling();
        }
    }
}
// --- end overview live ---

// --- library and upload ---
// Upload: each picked or dropped file is sent alone as the raw body of POST /upload, with its own progress bar
// and the server's answer (added, or why not).
{
  const form = document.querySelector('[data-upload]');
  if (form) {
    const list = document.querySelector('[data-upload-list]');
    const input = form.querySelector('[data-upload-files]');
    const drop = form.querySelector('[data-upload-drop]');
    const shelf = form.querySelector('[data-upload-shelf]');
    const token = document.querySelector('meta[name="csrf-token"]')?.content ?? '';

    const send = (file) => {
      const item = document.createElement('li');
      const name = document.createElement('span');
      name.textContent = file.name;
      const bar = document.createElement('progress');
      bar.max = 1; bar.value = 0;
      const result = document.createElement('span');
      result.className = 'upload-result';
      item.append(name, bar, result);
      list.append(item);
      // XMLHttpRequest, not fetch: only it reports upload progress.
      const request = new XMLHttpRequest();
      const query = new URLSearchParams({ shelf: shelf.value.trim(), name: file.name });
      request.open('POST', '/upload?' + query.toString());
      request.setRequestHeader('X-CSRF-Token', token);
      request.setRequestHeader('Content-Type', 'application/octet-stream');
      request.upload.addEventListener('progress', (event) => {
        if (event.lengthComputable) bar.value = event.loaded / event.total;
      });
      request.addEventListener('load', () => {
        let answer = {};
        try { answer = JSON.parse(request.responseText); } catch { answer = { error: request.statusText || 'No answer' }; }
        const ok = request.status >= 200 && request.status < 300;
        bar.value = ok ? 1 : bar.value;
        item.dataset.state = ok ? 'done' : 'failed';
        result.textContent = ok ? answer.message : (answer.error ?? `Refused (HTTP ${request.status})`);
      });
      request.addEventListener('error', () => {
        item.dataset.state = 'failed';
        result.textContent = 'The connection broke off; send it again.';
      });
      request.send(file);
    };

    // With the script each photo goes as soon as it is picked; the button is for the page without it.
    form.querySelector('[data-upload-send]').hidden = true;
    form.addEventListener('submit', (event) => event.preventDefault());
    input.addEventListener('change', () => { [...input.files].forEach(send); input.value = ''; });
    for (const type of ['dragenter', 'dragover']) {
      drop.addEventListener(type, (event) => { event.preventDefault(); drop.classList.add('over'); });
    }
    drop.addEventListener('dragleave', () => drop.classList.remove('over'));
    drop.addEventListener('drop', (event) => {
      event.preventDefault();
      drop.classList.remove('over');
      [...event.dataTransfer.files].forEach(send);
    });
  }
}
// --- end library and upload ---

// --- shelves ---
// The shelf page's missing books: one selected at a time (j/k or a tap), a key per answer: l lent (the name's field,
// then Enter), g gone, h still there. Without the script each answer is a form of its own.
{
  const missing = document.querySelector('[data-missing]');
  if (missing) {
    const items = [...missing.querySelectorAll('[data-missing-item]')];
    let current = 0;
    const select = (index) => {
      current = Math.max(0, Math.min(items.length - 1, index));
      items.forEach((item, at) => item.classList.toggle('selected', at === current));
      items[current]?.scrollIntoView({ block: 'nearest' });
    };
    items.forEach((item, at) => item.addEventListener('click', () => select(at)));
    select(0);
    let sent = false;
    window.addEventListener('pageshow', () => { sent = false; });
    document.addEventListener('keydown', (event) => {
      if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
      const target = event.target;
      if (target instanceof Element && target.closest('input, textarea, select, [contenteditable]')) {
        if (event.key === 'Escape') target.blur();
        return;
      }
      const key = event.key.toLowerCase();
      const item = items[current];
      if (!item) return;
      if (key === 'j' || key === 'arrowdown') { event.preventDefault(); select(current + 1); return; }
      if (key === 'k' || key === 'arrowup') { event.preventDefault(); select(current - 1); return; }
      if (key === 'l') {
        event.preventDefault();
        item.querySelector('[data-answer="lent"] input[name=lent_to]')?.focus();
        return;
      }
      const answer = { g: 'gone', h: 'here' }[key];
      if (!answer || sent) return;
      event.preventDefault();
      sent = true;
      item.querySelector(`[data-answer="${answer}"]`)?.requestSubmit();
    });
  }
}
// --- end shelves ---
