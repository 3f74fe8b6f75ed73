// libheif, opened with dlopen when the first HEIC photo is read rather than linked: a daemon that only sees
// JPEGs never maps libheif and its codecs (libde265, libx265, libaom, libdav1d, libnuma…), which are most of
// the shared-library pages it would otherwise carry. The header gives the types; `shelf_heif()` gives the
// functions, resolved once.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <libheif/heif.h>

// Every libheif function shelfd (and its test photo factory) calls.
#define SHELF_HEIF_FUNCTIONS(X) \
    X(heif_init) X(heif_context_alloc) X(heif_context_free) X(heif_context_read_from_memory_without_copy) \
    X(heif_context_get_primary_image_handle) X(heif_image_handle_release) \
    X(heif_image_handle_get_width) X(heif_image_handle_get_height) \
    X(heif_decoding_options_alloc) X(heif_decoding_options_free) X(heif_decode_image) \
    X(heif_image_release) X(heif_image_get_plane_readonly) X(heif_image_get_width) X(heif_image_get_height) \
    X(heif_have_encoder_for_format) X(heif_context_get_encoder_for_format) X(heif_encoder_release) \
    X(heif_encoder_set_lossy_quality) X(heif_image_create) X(heif_image_add_plane) X(heif_image_get_plane) \
    X(heif_encoding_options_alloc) X(heif_encoding_options_free) X(heif_context_encode_image) X(heif_context_write)

typedef struct ShelfHeif {
#define SHELF_HEIF_FIELD(name) __typeof__(name) *_Nonnull name;
    SHELF_HEIF_FUNCTIONS(SHELF_HEIF_FIELD)
#undef SHELF_HEIF_FIELD
} ShelfHeif;

// The loaded table and why loading failed. Static locals of an inline function, not file-scope statics: Swift
// emits the inline functions it calls but not the file-scope variables they use.
typedef struct ShelfHeifState {
    pthread_once_t once;
    int loaded;
    ShelfHeif table;
    char failure[512];
} ShelfHeifState;

static inline ShelfHeifState *_Nonnull shelf_heif_state(void) {
    static ShelfHeifState state = { .once = PTHREAD_ONCE_INIT };
    return &state;
}

static inline void shelf_heif_load(void) {
    ShelfHeifState *state = shelf_heif_state();
    // libheif 1.x keeps soname 1; the unversioned name is the -dev package's link, a last resort.
    const char *file = "libheif.so.1";
    void *library = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!library) library = dlopen((file = "libheif.so"), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(state->failure, sizeof state->failure, "%s", dlerror());
        return;
    }
#define SHELF_HEIF_RESOLVE(name) \
    if (!(*(void **)&state->table.name = dlsym(library, #name))) { \
        snprintf(state->failure, sizeof state->failure, "%s has no %s", file, #name); \
        return; \
    }
    SHELF_HEIF_FUNCTIONS(SHELF_HEIF_RESOLVE)
#undef SHELF_HEIF_RESOLVE
    // Registers the codecs; never deinitialised: they live as long as the process.
    state->table.heif_init(NULL);
    state->loaded = 1;
}

/// libheif's functions, loaded and initialised on the first call (thread-safe); NULL when the library cannot
/// be opened, and then `shelf_heif_error()` says why.
static inline const ShelfHeif *_Nullable shelf_heif(void) {
    ShelfHeifState *state = shelf_heif_state();
    pthread_once(&state->once, shelf_heif_load);
    return state->loaded ? &state->table : NULL;
}

static inline const char *_Nonnull shelf_heif_error(void) {
    shelf_heif();
    return shelf_heif_state()->failure;
}
