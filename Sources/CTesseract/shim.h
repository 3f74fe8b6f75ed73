// libtesseract, opened with dlopen when the first photo is read rather than linked: a daemon that never reads a
// photo with OCR (Gemini, OpenAI, Cloudflare) never maps libtesseract, leptonica and the thirty libraries they
// pull in (libarchive, libtiff, libwebp, libopenjp2, ICU…), and an offline daemon maps them on its first photo.
// The header gives the types; `shelf_tesseract()` gives the functions, resolved once.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <tesseract/capi.h>
#include <tesseract/version.h>

// Every libtesseract function shelfd calls.
#define SHELF_TESSERACT_FUNCTIONS(X) \
    X(TessVersion) X(TessDeleteText) \
    X(TessBaseAPICreate) X(TessBaseAPIDelete) X(TessBaseAPIInit2) X(TessBaseAPIEnd) X(TessBaseAPISetVariable) \
    X(TessBaseAPISetPageSegMode) X(TessBaseAPISetImage) X(TessBaseAPISetSourceResolution) X(TessBaseAPIClear) \
    X(TessBaseAPIRecognize) X(TessBaseAPIGetIterator) \
    X(TessResultIteratorDelete) X(TessResultIteratorGetPageIterator) X(TessResultIteratorGetUTF8Text) \
    X(TessResultIteratorConfidence) X(TessResultIteratorNext) X(TessPageIteratorBoundingBox)

typedef struct ShelfTesseract {
#define SHELF_TESSERACT_FIELD(name) __typeof__(name) *_Nonnull name;
    SHELF_TESSERACT_FUNCTIONS(SHELF_TESSERACT_FIELD)
#undef SHELF_TESSERACT_FIELD
} ShelfTesseract;

#define SHELF_STRING2(x) #x
#define SHELF_STRING(x) SHELF_STRING2(x)

// The loaded table and why loading failed. Static locals of an inline function, not file-scope statics: Swift
// emits the inline functions it calls but not the file-scope variables they use.
typedef struct ShelfTesseractState {
    pthread_once_t once;
    int loaded;
    ShelfTesseract table;
    char failure[512];
} ShelfTesseractState;

static inline ShelfTesseractState *_Nonnull shelf_tesseract_state(void) {
    static ShelfTesseractState state = { .once = PTHREAD_ONCE_INIT };
    return &state;
}

static inline void shelf_tesseract_load(void) {
    ShelfTesseractState *state = shelf_tesseract_state();
    // The soname of the major version whose header we compiled against ("libtesseract.so.5").
    const char *file = "libtesseract.so." SHELF_STRING(TESSERACT_MAJOR_VERSION);
    void *library = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(state->failure, sizeof state->failure, "%s", dlerror());
        return;
    }
#define SHELF_TESSERACT_RESOLVE(name) \
    if (!(*(void **)&state->table.name = dlsym(library, #name))) { \
        snprintf(state->failure, sizeof state->failure, "%s has no %s", file, #name); \
        return; \
    }
    SHELF_TESSERACT_FUNCTIONS(SHELF_TESSERACT_RESOLVE)
#undef SHELF_TESSERACT_RESOLVE
    state->loaded = 1;
}

/// libtesseract's functions, loaded on the first call (thread-safe); NULL when the library cannot be opened,
/// and then `shelf_tesseract_error()` says why.
static inline const ShelfTesseract *_Nullable shelf_tesseract(void) {
    ShelfTesseractState *state = shelf_tesseract_state();
    pthread_once(&state->once, shelf_tesseract_load);
    return state->loaded ? &state->table : NULL;
}

static inline const char *_Nonnull shelf_tesseract_error(void) {
    shelf_tesseract();
    return shelf_tesseract_state()->failure;
}
