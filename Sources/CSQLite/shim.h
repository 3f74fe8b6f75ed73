#include <sqlite3.h>
// SQLITE_TRANSIENT is a macro cast and does not import.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }
