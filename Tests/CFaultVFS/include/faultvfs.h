// A fault-injecting SQLite VFS for tests: it wraps the default (unix) VFS and can simulate a
// power cut (writes since a file's last sync are lost or torn), fail a chosen write or sync,
// and count what went by. One instance per registered name, so parallel tests do not meet.
#ifndef FAULTVFS_H
#define FAULTVFS_H

#include <stdint.h>

typedef struct faultvfs faultvfs;

/// Operations a failure can be injected into.
enum faultvfs_operation { FAULTVFS_WRITE = 1, FAULTVFS_SYNC = 2 };

/// What a power cut does to the writes not yet synced.
enum faultvfs_cut_mode {
    /// Every write since each file's last sync is lost.
    FAULTVFS_DROP = 0,
    /// A random prefix of them (per file) reached the disk; the write in flight may leave one
    /// sector of garbage inside its own range (SQLite's powersafe-overwrite assumption holds).
    FAULTVFS_TEAR = 1,
};

/// Counters since registration.
typedef struct faultvfs_stats {
    int64_t opens;
    int64_t writes;
    int64_t bytes_written;
    int64_t syncs;
    int64_t truncates;
    int64_t injected_failures;
    /// Writes lost or torn by the power cut (0 before it).
    int64_t writes_lost;
    /// Writes not yet covered by a sync, over every file.
    int64_t unsynced_writes;
} faultvfs_stats;

/// Registers a VFS called `name` over the default VFS (not as the default). NULL on failure.
faultvfs *faultvfs_register(const char *name);

/// Unregisters and frees it. Every connection using it must be closed first.
void faultvfs_unregister(faultvfs *vfs);

/// The next write or sync after `after` more of the same operation succeeded fails with `code`
/// (e.g. SQLITE_FULL, SQLITE_IOERR_WRITE, SQLITE_IOERR_FSYNC); once, or from then on when
/// `persistent` is non-zero. A failed sync keeps the file's unsynced writes unsynced.
void faultvfs_fail(faultvfs *vfs, int operation, int64_t after, int code, int persistent);

/// Stops injecting failures.
void faultvfs_clear_failures(faultvfs *vfs);

/// Cuts the power now: unsynced writes are dropped or torn on the real files, and every later
/// write, sync, truncate, delete or open through this VFS fails (the machine is off).
void faultvfs_power_cut(faultvfs *vfs, int mode, uint64_t seed);

/// Cuts the power inside the write or sync that comes after `operations` more of them.
void faultvfs_power_cut_after(faultvfs *vfs, int64_t operations, int mode, uint64_t seed);

/// Non-zero once the power has been cut.
int faultvfs_is_off(faultvfs *vfs);

/// The counters.
void faultvfs_get_stats(faultvfs *vfs, faultvfs_stats *out);

#endif
