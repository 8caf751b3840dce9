#ifndef PHOTOSD_CSQLITE_SHIM_H
#define PHOTOSD_CSQLITE_SHIM_H
#include <sqlite3.h>

/// sqlite3_config is variadic, which Swift cannot call: these wrap the settings we use.
///
/// Turns off SQLite's memory statistics. With them on (the default), every allocation inside
/// SQLite takes a process-wide mutex to update the counters, which nothing here reads. Takes
/// effect only before SQLite is first initialized; returns SQLITE_MISUSE after (harmless).
static inline int csqlite_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/// SQLite's extended result codes are expression macros (`SQLITE_CONSTRAINT | (8<<8)`), which
/// Swift does not import: the ones this project names, as constants Swift sees.
static const int CSQLITE_CONSTRAINT_UNIQUE = SQLITE_CONSTRAINT_UNIQUE;
static const int CSQLITE_CONSTRAINT_PRIMARYKEY = SQLITE_CONSTRAINT_PRIMARYKEY;
#endif
