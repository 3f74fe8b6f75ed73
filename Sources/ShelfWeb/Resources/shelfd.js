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
