// libzbar, opened with dlopen when the first photo's barcodes are read rather than linked: a daemon with
// `[pipeline] barcodes = "off"` never maps libzbar and what it pulls in (libv4l, libX11, libdbus…), and one
// without libzbar installed still starts and reads photos without barcodes (`shelfd doctor` says so).
// The header gives the types; `shelf_zbar()` gives the functions, resolved once.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <zbar.h>

// Every libzbar function shelfd calls.
#define SHELF_ZBAR_FUNCTIONS(X) \
    X(zbar_version) X(zbar_image_scanner_create) X(zbar_image_scanner_destroy) X(zbar_image_scanner_set_config) \
    X(zbar_image_create) X(zbar_image_destroy) X(zbar_image_set_format) X(zbar_image_set_size) \
    X(zbar_image_set_data) X(zbar_scan_image) X(zbar_image_first_symbol) X(zbar_symbol_next) \
    X(zbar_symbol_get_type) X(zbar_symbol_get_data) X(zbar_symbol_get_loc_size) X(zbar_symbol_get_loc_x) \
    X(zbar_symbol_get_loc_y)

typedef struct ShelfZBar {
#define SHELF_ZBAR_FIELD(name) __typeof__(name) *_Nonnull name;
    SHELF_ZBAR_FUNCTIONS(SHELF_ZBAR_FIELD)
#undef SHELF_ZBAR_FIELD
} ShelfZBar;

// The loaded table and why loading failed. Static locals of an inline function, not file-scope statics: Swift
// emits the inline functions it calls but not the file-scope variables they use.
typedef struct ShelfZBarState {
    pthread_once_t once;
    int loaded;
    ShelfZBar table;
    char failure[512];
} ShelfZBarState;

static inline ShelfZBarState *_Nonnull shelf_zbar_state(void) {
    static ShelfZBarState state = { .once = PTHREAD_ONCE_INIT };
    return &state;
}

static inline void shelf_zbar_load(void) {
    ShelfZBarState *state = shelf_zbar_state();
    // The soname Debian's libzbar0 ships (ZBar 0.2x).
    const char *file = "libzbar.so.0";
    void *library = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(state->failure, sizeof state->failure, "%s", dlerror());
        return;
    }
#define SHELF_ZBAR_RESOLVE(name) \
    if (!(*(void **)&state->table.name = dlsym(library, #name))) { \
        snprintf(state->failure, sizeof state->failure, "%s has no %s", file, #name); \
        return; \
    }
    SHELF_ZBAR_FUNCTIONS(SHELF_ZBAR_RESOLVE)
#undef SHELF_ZBAR_RESOLVE
    state->loaded = 1;
}

/// libzbar's functions, loaded on the first call (thread-safe); NULL when the library cannot be opened,
/// and then `shelf_zbar_error()` says why.
static inline const ShelfZBar *_Nullable shelf_zbar(void) {
    ShelfZBarState *state = shelf_zbar_state();
    pthread_once(&state->once, shelf_zbar_load);
    return state->loaded ? &state->table : NULL;
}

static inline const char *_Nonnull shelf_zbar_error(void) {
    shelf_zbar();
    return shelf_zbar_state()->failure;
}

// ZBar's four-character code of 8-bit grey pixels ("Y800"), which its header builds with a macro Swift cannot call.
static inline unsigned long shelf_zbar_grey_format(void) { return zbar_fourcc('Y', '8', '0', '0'); }
