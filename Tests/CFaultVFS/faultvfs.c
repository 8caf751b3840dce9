// A fault-injecting SQLite VFS for tests (see include/faultvfs.h).
//
// Writes go through to the real files at once (so reads see them, like the page cache), but
// every write and truncate since a file's last successful xSync is remembered with the bytes it
// replaced. A power cut undoes them, newest first, on the real files: all of them (drop), or all
// but a random prefix, with one sector of the first undone write garbled (tear). Everything runs
// under one mutex per VFS, so a cut is atomic with respect to the I/O it interrupts.
#include "faultvfs.h"

#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum record_kind { RECORD_WRITE, RECORD_RESIZE };

/// One change since the last sync: the file's size before it and the bytes it replaced.
typedef struct record {
    int kind;
    sqlite3_int64 offset;
    sqlite3_int64 length;
    sqlite3_int64 size_before;
    unsigned char *before;
    sqlite3_int64 before_length;
} record;

struct fault_file;

/// What the VFS knows of one path: its unsynced changes and the handles open on it.
typedef struct path_state {
    char *path;
    record *records;
    int count;
    int capacity;
    struct fault_file *open_files;
    struct path_state *next;
} path_state;

struct faultvfs {
    sqlite3_vfs base;
    sqlite3_vfs *real;
    pthread_mutex_t mutex;
    path_state *paths;
    int off;
    faultvfs_stats stats;
    int fail_operation;
    int64_t fail_after;
    int fail_code;
    int fail_persistent;
    int64_t cut_after;
    int cut_mode;
    uint64_t cut_seed;
    char name[];
};

typedef struct fault_file {
    sqlite3_file base;
    faultvfs *vfs;
    path_state *state;
    struct fault_file *next_open;
    sqlite3_file *real;
} fault_file;

static uint64_t next_random(uint64_t *state) {
    // splitmix64: small, seeded, reproducible.
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void free_records(faultvfs *vfs, path_state *state) {
    for (int i = 0; i < state->count; i++) free(state->records[i].before);
    vfs->stats.unsynced_writes -= state->count;
    state->count = 0;
}

static path_state *find_state(faultvfs *vfs, const char *path, int create) {
    for (path_state *state = vfs->paths; state; state = state->next) {
        if (strcmp(state->path, path) == 0) return state;
    }
    if (!create) return NULL;
    path_state *state = calloc(1, sizeof(path_state));
    if (!state) return NULL;
    state->path = strdup(path);
    if (!state->path) {
        free(state);
        return NULL;
    }
    state->next = vfs->paths;
    vfs->paths = state;
    return state;
}

static int append_record(faultvfs *vfs, path_state *state, record value) {
    if (state->count == state->capacity) {
        int capacity = state->capacity ? state->capacity * 2 : 16;
        record *grown = realloc(state->records, sizeof(record) * (size_t)capacity);
        if (!grown) return SQLITE_NOMEM;
        state->records = grown;
        state->capacity = capacity;
    }
    state->records[state->count++] = value;
    vfs->stats.unsynced_writes += 1;
    return SQLITE_OK;
}

// --- Undoing changes on the real file ---------------------------------------------------------

/// Writes and resizes the real file: through an open handle when there is one (closing a second
/// descriptor would drop the process's POSIX locks on the file), else through a descriptor.
typedef struct raw_file {
    sqlite3_file *handle;
    int fd;
} raw_file;

static int raw_open(path_state *state, raw_file *file) {
    file->handle = state->open_files ? state->open_files->real : NULL;
    file->fd = -1;
    if (file->handle) return 1;
    file->fd = open(state->path, O_RDWR | O_CLOEXEC);
    return file->fd >= 0;
}

static void raw_close(raw_file *file) {
    if (file->fd >= 0) close(file->fd);
}

static void raw_write(raw_file *file, const void *bytes, sqlite3_int64 length, sqlite3_int64 offset) {
    if (length <= 0) return;
    if (file->handle) {
        file->handle->pMethods->xWrite(file->handle, bytes, (int)length, offset);
    } else {
        (void)!pwrite(file->fd, bytes, (size_t)length, (off_t)offset);
    }
}

static void raw_resize(raw_file *file, sqlite3_int64 size) {
    if (file->handle) {
        file->handle->pMethods->xTruncate(file->handle, size);
    } else {
        (void)!ftruncate(file->fd, (off_t)size);
    }
}

static void undo(raw_file *file, const record *change) {
    raw_resize(file, change->size_before);
    if (change->before_length > 0) {
        sqlite3_int64 at = change->kind == RECORD_WRITE ? change->offset : change->size_before - change->before_length;
        raw_write(file, change->before, change->before_length, at);
    }
}

/// The power goes: called with the mutex held.
static void cut_power(faultvfs *vfs, int mode, uint64_t seed) {
    uint64_t random = seed;
    vfs->off = 1;
    for (path_state *state = vfs->paths; state; state = state->next) {
        if (state->count == 0) continue;
        raw_file file;
        if (!raw_open(state, &file)) {
            free_records(vfs, state);
            continue;
        }
        int kept = mode == FAULTVFS_TEAR ? (int)(next_random(&random) % (uint64_t)(state->count + 1)) : 0;
        for (int i = state->count - 1; i >= kept; i--) undo(&file, &state->records[i]);
        vfs->stats.writes_lost += state->count - kept;
        record *torn = kept < state->count ? &state->records[kept] : NULL;
        if (mode == FAULTVFS_TEAR && torn && torn->kind == RECORD_WRITE && torn->length > 0 && next_random(&random) % 2) {
            // The write in flight: one 512-byte sector of it holds garbage, clipped to its range.
            sqlite3_int64 inside = torn->offset + (sqlite3_int64)(next_random(&random) % (uint64_t)torn->length);
            sqlite3_int64 start = inside / 512 * 512;
            if (start < torn->offset) start = torn->offset;
            sqlite3_int64 end = inside / 512 * 512 + 512;
            if (end > torn->offset + torn->length) end = torn->offset + torn->length;
            unsigned char garbage[512];
            for (int i = 0; i < 512; i++) garbage[i] = (unsigned char)next_random(&random);
            raw_write(&file, garbage, end - start, start);
        }
        raw_close(&file);
        free_records(vfs, state);
    }
}

/// Counts a write or sync toward an armed power cut; non-zero when the power went before it.
static int power_fails_now(faultvfs *vfs) {
    if (vfs->off) return 1;
    if (vfs->cut_after < 0) return 0;
    if (vfs->cut_after == 0) {
        vfs->cut_after = -1;
        cut_power(vfs, vfs->cut_mode, vfs->cut_seed);
        return 1;
    }
    vfs->cut_after -= 1;
    return 0;
}

/// The injected failure's code for this operation, or SQLITE_OK.
static int injected_failure(faultvfs *vfs, int operation) {
    if (vfs->fail_operation != operation) return SQLITE_OK;
    if (vfs->fail_after > 0) {
        vfs->fail_after -= 1;
        return SQLITE_OK;
    }
    int code = vfs->fail_code;
    if (!vfs->fail_persistent) vfs->fail_operation = 0;
    vfs->stats.injected_failures += 1;
    return code;
}

// --- sqlite3_io_methods -----------------------------------------------------------------------

static int file_close(sqlite3_file *base) {
    fault_file *file = (fault_file *)base;
    faultvfs *vfs = file->vfs;
    pthread_mutex_lock(&vfs->mutex);
    if (file->state) {
        fault_file **link = &file->state->open_files;
        while (*link && *link != file) link = &(*link)->next_open;
        if (*link) *link = file->next_open;
    }
    pthread_mutex_unlock(&vfs->mutex);
    return file->real->pMethods->xClose(file->real);
}

static int file_read(sqlite3_file *base, void *buffer, int amount, sqlite3_int64 offset) {
    fault_file *file = (fault_file *)base;
    return file->real->pMethods->xRead(file->real, buffer, amount, offset);
}

static int file_write(sqlite3_file *base, const void *buffer, int amount, sqlite3_int64 offset) {
    fault_file *file = (fault_file *)base;
    faultvfs *vfs = file->vfs;
    pthread_mutex_lock(&vfs->mutex);
    if (power_fails_now(vfs)) {
        pthread_mutex_unlock(&vfs->mutex);
        return SQLITE_IOERR_WRITE;
    }
    int rc = injected_failure(vfs, FAULTVFS_WRITE);
    if (rc != SQLITE_OK) {
        pthread_mutex_unlock(&vfs->mutex);
        return rc;
    }
    record change = {RECORD_WRITE, offset, amount, 0, NULL, 0};
    if (file->state) {
        rc = file->real->pMethods->xFileSize(file->real, &change.size_before);
        if (rc == SQLITE_OK && offset < change.size_before) {
            sqlite3_int64 end = offset + amount < change.size_before ? offset + amount : change.size_before;
            change.before_length = end - offset;
            change.before = malloc((size_t)change.before_length);
            if (!change.before) rc = SQLITE_NOMEM;
            if (rc == SQLITE_OK) {
                rc = file->real->pMethods->xRead(file->real, change.before, (int)change.before_length, offset);
                if (rc == SQLITE_IOERR_SHORT_READ) rc = SQLITE_OK;
            }
        }
    }
    if (rc == SQLITE_OK) rc = file->real->pMethods->xWrite(file->real, buffer, amount, offset);
    if (rc == SQLITE_OK) {
        vfs->stats.writes += 1;
        vfs->stats.bytes_written += amount;
        if (file->state) rc = append_record(vfs, file->state, change);
        if (rc == SQLITE_OK) change.before = NULL;
    }
    free(change.before);
    pthread_mutex_unlock(&vfs->mutex);
    return rc;
}

/// Remembers a change of size (truncate, or a size hint that grows the file) before it happens.
static int record_resize(fault_file *file, sqlite3_int64 size) {
    record change = {RECORD_RESIZE, size, 0, 0, NULL, 0};
    int rc = file->real->pMethods->xFileSize(file->real, &change.size_before);
    if (rc != SQLITE_OK || change.size_before == size) return rc;
    if (size < change.size_before) {
        change.before_length = change.size_before - size;
        change.before = malloc((size_t)change.before_length);
        if (!change.before) return SQLITE_NOMEM;
        rc = file->real->pMethods->xRead(file->real, change.before, (int)change.before_length, size);
        if (rc == SQLITE_IOERR_SHORT_READ) rc = SQLITE_OK;
    }
    if (rc == SQLITE_OK) rc = append_record(file->vfs, file->state, change);
    if (rc != SQLITE_OK) free(change.before);
    return rc;
}

static int file_truncate(sqlite3_file *base, sqlite3_int64 size) {
    fault_file *file = (fault_file *)base;
    faultvfs *vfs = file->vfs;
    pthread_mutex_lock(&vfs->mutex);
    int rc = vfs->off ? SQLITE_IOERR_TRUNCATE : SQLITE_OK;
    if (rc == SQLITE_OK && file->state) rc = record_resize(file, size);
    if (rc == SQLITE_OK) rc = file->real->pMethods->xTruncate(file->real, size);
    if (rc == SQLITE_OK) vfs->stats.truncates += 1;
    pthread_mutex_unlock(&vfs->mutex);
    return rc;
}

static int file_sync(sqlite3_file *base, int flags) {
    fault_file *file = (fault_file *)base;
    faultvfs *vfs = file->vfs;
    pthread_mutex_lock(&vfs->mutex);
    if (power_fails_now(vfs)) {
        pthread_mutex_unlock(&vfs->mutex);
        return SQLITE_IOERR_FSYNC;
    }
    int rc = injected_failure(vfs, FAULTVFS_SYNC);
    if (rc == SQLITE_OK) rc = file->real->pMethods->xSync(file->real, flags);
    if (rc == SQLITE_OK) {
        vfs->stats.syncs += 1;
        if (file->state) free_records(vfs, file->state);
    }
    pthread_mutex_unlock(&vfs->mutex);
    return rc;
}

static int file_size(sqlite3_file *base, sqlite3_int64 *size) {
    fault_file *file = (fault_file *)base;
    return file->real->pMethods->xFileSize(file->real, size);
}

static int file_lock(sqlite3_file *base, int level) {
    fault_file *file = (fault_file *)base;
    return file->real->pMethods->xLock(file->real, level);
}

static int file_unlock(sqlite3_file *base, int level) {
    fault_file *file = (fault_file *)base;
    return file->real->pMethods->xUnlock(file->real, level);
}

static int file_check_reserved_lock(sqlite3_file *base, int *result) {
    fault_file *file = (fault_file *)base;
    return file->real->pMethods->xCheckReservedLock(file->real, result);
}

static int file_control(sqlite3_file *base, int op, void *argument) {
    fault_file *file = (fault_file *)base;
    if (op == SQLITE_FCNTL_SIZE_HINT && file->state) {
        // The unix VFS grows the file here without xWrite: remember the old size.
        faultvfs *vfs = file->vfs;
        pthread_mutex_lock(&vfs->mutex);
        sqlite3_int64 current = 0;
        int rc = vfs->off ? SQLITE_IOERR_TRUNCATE : file->real->pMethods->xFileSize(file->real, &current);
        sqlite3_int64 hint = *(sqlite3_int64 *)argument;
        if (rc == SQLITE_OK && hint > current) rc = record_resize(file, hint);
        if (rc == SQLITE_OK) rc = file->real->pMethods->xFileControl(file->real, op, argument);
        pthread_mutex_unlock(&vfs->mutex);
        return rc;
    }
    return file->real->pMethods->xFileControl(file->real, op, argument);
}

static int file_sector_size(sqlite3_file *base) {
    fault_file *file = (fault_file *)base;
    return file->real->pMethods->xSectorSize(file->real);
}

static int file_device_characteristics(sqlite3_file *base) {
    fault_file *file = (fault_file *)base;
    return file->real->pMethods->xDeviceCharacteristics(file->real);
}

static int file_shm_map(sqlite3_file *base, int region, int size, int extend, void volatile **address) {
    fault_file *file = (fault_file *)base;
    return file->real->pMethods->xShmMap(file->real, region, size, extend, address);
}

static int file_shm_lock(sqlite3_file *base, int offset, int count, int flags) {
    fault_file *file = (fault_file *)base;
    return file->real->pMethods->xShmLock(file->real, offset, count, flags);
}

static void file_shm_barrier(sqlite3_file *base) {
    fault_file *file = (fault_file *)base;
    file->real->pMethods->xShmBarrier(file->real);
}

static int file_shm_unmap(sqlite3_file *base, int delete_flag) {
    fault_file *file = (fault_file *)base;
    return file->real->pMethods->xShmUnmap(file->real, delete_flag);
}

static int file_fetch(sqlite3_file *base, sqlite3_int64 offset, int amount, void **pointer) {
    fault_file *file = (fault_file *)base;
    return file->real->pMethods->xFetch(file->real, offset, amount, pointer);
}

static int file_unfetch(sqlite3_file *base, sqlite3_int64 offset, void *pointer) {
    fault_file *file = (fault_file *)base;
    return file->real->pMethods->xUnfetch(file->real, offset, pointer);
}

static const sqlite3_io_methods methods_v1 = {
    1, file_close, file_read, file_write, file_truncate, file_sync, file_size, file_lock, file_unlock,
    file_check_reserved_lock, file_control, file_sector_size, file_device_characteristics,
    NULL, NULL, NULL, NULL, NULL, NULL,
};
static const sqlite3_io_methods methods_v2 = {
    2, file_close, file_read, file_write, file_truncate, file_sync, file_size, file_lock, file_unlock,
    file_check_reserved_lock, file_control, file_sector_size, file_device_characteristics,
    file_shm_map, file_shm_lock, file_shm_barrier, file_shm_unmap, NULL, NULL,
};
static const sqlite3_io_methods methods_v3 = {
    3, file_close, file_read, file_write, file_truncate, file_sync, file_size, file_lock, file_unlock,
    file_check_reserved_lock, file_control, file_sector_size, file_device_characteristics,
    file_shm_map, file_shm_lock, file_shm_barrier, file_shm_unmap, file_fetch, file_unfetch,
};

// --- sqlite3_vfs --------------------------------------------------------------------------------

static faultvfs *owner(sqlite3_vfs *base) { return (faultvfs *)base; }

static int vfs_open(sqlite3_vfs *base, sqlite3_filename name, sqlite3_file *out, int flags, int *out_flags) {
    faultvfs *vfs = owner(base);
    fault_file *file = (fault_file *)out;
    memset(file, 0, sizeof(fault_file));
    file->vfs = vfs;
    file->real = (sqlite3_file *)(file + 1);
    pthread_mutex_lock(&vfs->mutex);
    int off = vfs->off;
    pthread_mutex_unlock(&vfs->mutex);
    if (off) return SQLITE_CANTOPEN;
    int rc = vfs->real->xOpen(vfs->real, name, file->real, flags, out_flags);
    if (rc != SQLITE_OK || !file->real->pMethods) {
        file->base.pMethods = NULL;
        return rc;
    }
    switch (file->real->pMethods->iVersion) {
        case 1: file->base.pMethods = &methods_v1; break;
        case 2: file->base.pMethods = &methods_v2; break;
        default: file->base.pMethods = &methods_v3; break;
    }
    pthread_mutex_lock(&vfs->mutex);
    vfs->stats.opens += 1;
    // A file without a name is a temporary file: it does not outlive the connection.
    if (name) file->state = find_state(vfs, name, 1);
    if (file->state) {
        file->next_open = file->state->open_files;
        file->state->open_files = file;
    }
    pthread_mutex_unlock(&vfs->mutex);
    return SQLITE_OK;
}

static int vfs_delete(sqlite3_vfs *base, const char *name, int sync_directory) {
    faultvfs *vfs = owner(base);
    pthread_mutex_lock(&vfs->mutex);
    if (vfs->off) {
        pthread_mutex_unlock(&vfs->mutex);
        return SQLITE_IOERR_DELETE;
    }
    // A deleted file's unsynced writes no longer matter (whether the delete itself survives a
    // cut is not modelled: directories are not tracked).
    path_state *state = find_state(vfs, name, 0);
    if (state) free_records(vfs, state);
    int rc = vfs->real->xDelete(vfs->real, name, sync_directory);
    pthread_mutex_unlock(&vfs->mutex);
    return rc;
}

static int vfs_access(sqlite3_vfs *base, const char *name, int flags, int *result) {
    return owner(base)->real->xAccess(owner(base)->real, name, flags, result);
}

static int vfs_full_pathname(sqlite3_vfs *base, const char *name, int size, char *out) {
    return owner(base)->real->xFullPathname(owner(base)->real, name, size, out);
}

static void *vfs_dl_open(sqlite3_vfs *base, const char *name) { return owner(base)->real->xDlOpen(owner(base)->real, name); }
static void vfs_dl_error(sqlite3_vfs *base, int size, char *out) { owner(base)->real->xDlError(owner(base)->real, size, out); }
static void (*vfs_dl_sym(sqlite3_vfs *base, void *library, const char *symbol))(void) {
    return owner(base)->real->xDlSym(owner(base)->real, library, symbol);
}
static void vfs_dl_close(sqlite3_vfs *base, void *library) { owner(base)->real->xDlClose(owner(base)->real, library); }
static int vfs_randomness(sqlite3_vfs *base, int size, char *out) { return owner(base)->real->xRandomness(owner(base)->real, size, out); }
static int vfs_sleep(sqlite3_vfs *base, int microseconds) { return owner(base)->real->xSleep(owner(base)->real, microseconds); }
static int vfs_current_time(sqlite3_vfs *base, double *out) { return owner(base)->real->xCurrentTime(owner(base)->real, out); }
static int vfs_get_last_error(sqlite3_vfs *base, int size, char *out) {
    return owner(base)->real->xGetLastError(owner(base)->real, size, out);
}
static int vfs_current_time_int64(sqlite3_vfs *base, sqlite3_int64 *out) {
    return owner(base)->real->xCurrentTimeInt64(owner(base)->real, out);
}

// --- Public API ---------------------------------------------------------------------------------

faultvfs *faultvfs_register(const char *name) {
    sqlite3_vfs *real = sqlite3_vfs_find(NULL);
    if (!real || real->iVersion < 2) return NULL;
    size_t name_length = strlen(name) + 1;
    faultvfs *vfs = calloc(1, sizeof(faultvfs) + name_length);
    if (!vfs) return NULL;
    memcpy(vfs->name, name, name_length);
    vfs->real = real;
    vfs->cut_after = -1;
    pthread_mutex_init(&vfs->mutex, NULL);
    sqlite3_vfs *base = &vfs->base;
    base->iVersion = 2;
    base->szOsFile = (int)sizeof(fault_file) + real->szOsFile;
    base->mxPathname = real->mxPathname;
    base->zName = vfs->name;
    base->xOpen = vfs_open;
    base->xDelete = vfs_delete;
    base->xAccess = vfs_access;
    base->xFullPathname = vfs_full_pathname;
    base->xDlOpen = vfs_dl_open;
    base->xDlError = vfs_dl_error;
    base->xDlSym = vfs_dl_sym;
    base->xDlClose = vfs_dl_close;
    base->xRandomness = vfs_randomness;
    base->xSleep = vfs_sleep;
    base->xCurrentTime = vfs_current_time;
    base->xGetLastError = vfs_get_last_error;
    base->xCurrentTimeInt64 = vfs_current_time_int64;
    if (sqlite3_vfs_register(base, 0) != SQLITE_OK) {
        pthread_mutex_destroy(&vfs->mutex);
        free(vfs);
        return NULL;
    }
    return vfs;
}

void faultvfs_unregister(faultvfs *vfs) {
    if (!vfs) return;
    sqlite3_vfs_unregister(&vfs->base);
    path_state *state = vfs->paths;
    while (state) {
        path_state *next = state->next;
        free_records(vfs, state);
        free(state->records);
        free(state->path);
        free(state);
        state = next;
    }
    pthread_mutex_destroy(&vfs->mutex);
    free(vfs);
}

void faultvfs_fail(faultvfs *vfs, int operation, int64_t after, int code, int persistent) {
    pthread_mutex_lock(&vfs->mutex);
    vfs->fail_operation = operation;
    vfs->fail_after = after;
    vfs->fail_code = code;
    vfs->fail_persistent = persistent;
    pthread_mutex_unlock(&vfs->mutex);
}

void faultvfs_clear_failures(faultvfs *vfs) {
    pthread_mutex_lock(&vfs->mutex);
    vfs->fail_operation = 0;
    pthread_mutex_unlock(&vfs->mutex);
}

void faultvfs_power_cut(faultvfs *vfs, int mode, uint64_t seed) {
    pthread_mutex_lock(&vfs->mutex);
    if (!vfs->off) cut_power(vfs, mode, seed);
    pthread_mutex_unlock(&vfs->mutex);
}

void faultvfs_power_cut_after(faultvfs *vfs, int64_t operations, int mode, uint64_t seed) {
    pthread_mutex_lock(&vfs->mutex);
    vfs->cut_after = operations;
    vfs->cut_mode = mode;
    vfs->cut_seed = seed;
    pthread_mutex_unlock(&vfs->mutex);
}

int faultvfs_is_off(faultvfs *vfs) {
    pthread_mutex_lock(&vfs->mutex);
    int off = vfs->off;
    pthread_mutex_unlock(&vfs->mutex);
    return off;
}

void faultvfs_get_stats(faultvfs *vfs, faultvfs_stats *out) {
    pthread_mutex_lock(&vfs->mutex);
    *out = vfs->stats;
    pthread_mutex_unlock(&vfs->mutex);
}
