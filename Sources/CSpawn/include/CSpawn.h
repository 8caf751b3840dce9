#ifndef PHOTOSD_CSPAWN_H
#define PHOTOSD_CSPAWN_H

#include <sys/types.h>

/// Starts `path` with `argv` and `envp` (NULL-terminated) in `directory` (NULL: the caller's),
/// its descriptors 0, 1 and 2 from `in` (-1: /dev/null), `out` and `err`, and no other: every
/// descriptor from 3 up is closed in the child, whatever its close-on-exec flag. Default signal
/// dispositions, an empty signal mask. Returns 0 and the child's id in `pid`, or an errno value.
int photosd_spawn(const char *path, char *const argv[], char *const envp[], const char *directory,
                  int in, int out, int err, pid_t *pid);

/// A pipe whose two ends are close-on-exec from the start (pipe2): 0, or an errno value.
int photosd_pipe(int fds[2]);

#endif
