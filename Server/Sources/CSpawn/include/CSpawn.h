// posix_spawn(3) for the Server tests' and tools' child processes, with the glibc file actions
// Swift's Glibc module does not export (they need _GNU_SOURCE): the child changes its working
// directory itself, and every descriptor it is not given is closed in the child without
// listing them.
#ifndef C_SPAWN_H
#define C_SPAWN_H
#include <sys/types.h>

/// Starts `path` with `argv` and `envp` (NULL-terminated) in `directory` (NULL: the parent's).
/// The child's descriptor i is `descriptors[i]` for i < `count`, and it inherits no other; every
/// `descriptors[i]` must be at least `count`, so that no dup2 overwrites a later source.
/// Returns 0 and sets `*pid`, or an errno value (exec failures included).
int beekon_spawn(
    pid_t *pid, const char *path, char *const argv[], char *const envp[], const char *directory,
    const int *descriptors, int count);

#endif
