// zlib's gz* functions read .gz files and, transparently, plain ones.
#include <zlib.h>
