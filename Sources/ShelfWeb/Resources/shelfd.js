// shelfd's one script: keys, live updates and upload on top of pages that work without it.

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
