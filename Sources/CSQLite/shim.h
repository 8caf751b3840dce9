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
#endif
