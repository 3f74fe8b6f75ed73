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
