// posix_spawn with what glibc offers only under _GNU_SOURCE (chdir and closefrom file actions,
// pipe2), which Swift's import of spawn.h does not show. Used by ChildProcess instead of
// Foundation's Process (see ChildProcess.swift for why).
#define _GNU_SOURCE
#include "CSpawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

int photosd_spawn(const char *path, char *const argv[], char *const envp[], const char *directory,
                  int in, int out, int err, pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int status = posix_spawn_file_actions_init(&actions);
    if (status != 0) return status;
    status = posix_spawnattr_init(&attributes);
    if (status != 0) { posix_spawn_file_actions_destroy(&actions); return status; }
    if (in >= 0) status = posix_spawn_file_actions_adddup2(&actions, in, 0);
    else status = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (status == 0) status = posix_spawn_file_actions_adddup2(&actions, out, 1);
    if (status == 0) status = posix_spawn_file_actions_adddup2(&actions, err, 2);
    if (status == 0) status = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (status == 0 && directory != NULL) status = posix_spawn_file_actions_addchdir_np(&actions, directory);
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    if (status == 0) status = posix_spawnattr_setsigdefault(&attributes, &all);
    if (status == 0) status = posix_spawnattr_setsigmask(&attributes, &none);
    if (status == 0) status = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    if (status == 0) status = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return status;
}

int photosd_pipe(int fds[2]) {
    return pipe2(fds, O_CLOEXEC) == 0 ? 0 : errno;
}
