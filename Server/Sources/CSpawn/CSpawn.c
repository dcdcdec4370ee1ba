#if defined(__linux__)
#define _GNU_SOURCE
#endif
#include "CSpawn.h"
#include <spawn.h>

int beekon_spawn(
    pid_t *pid, const char *path, char *const argv[], char *const envp[], const char *directory,
    const int *descriptors, int count) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int error = posix_spawn_file_actions_init(&actions);
    if (error != 0) return error;
    error = posix_spawnattr_init(&attributes);
    if (error != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return error;
    }
    for (int i = 0; error == 0 && i < count; i++) {
        error = posix_spawn_file_actions_adddup2(&actions, descriptors[i], i);
    }
    // The child changes directory itself (glibc 2.29; macOS 10.15).
    if (error == 0 && directory != NULL) error = posix_spawn_file_actions_addchdir_np(&actions, directory);
#if defined(__APPLE__)
    // Apple's extension: every descriptor not named by a file action is closed in the child.
    // (This repository's CI builds on Linux only.)
    if (error == 0) error = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_CLOEXEC_DEFAULT);
#else
    // glibc 2.34: close_range in the child. Foundation's Process lists /proc/self/fd to find what
    // to close, with a readdir copy that reads past its buffer once about 1,300 are open.
    if (error == 0) error = posix_spawn_file_actions_addclosefrom_np(&actions, count);
#endif
    // No process group of its own: an interrupt of the parent's group reaches the child too.
    if (error == 0) error = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return error;
}
