// glibc's malloc_trim: Swift's Glibc module does not export <malloc.h>.
#include <malloc.h>
