#define _GNU_SOURCE
#include "CSpawn.h"
#include <spawn.h>

int beekon_spawn(
    pid_t *pid, const char *path, char *const argv[], char *const envp[], const char *directory,
    const int *descriptors, int count) {
    posix_spawn_file_actions_t actions;
    int error = posix_spawn_file_actions_init(&actions);
    if (error != 0) return error;
    for (int i = 0; error == 0 && i < count; i++) {
        error = posix_spawn_file_actions_adddup2(&actions, descriptors[i], i);
    }
    // glibc 2.29: the child alone changes directory (Foundation's Process changes the parent's,
    // process-wide, around the spawn, which races with every other thread and spawn).
    if (error == 0 && directory != NULL) error = posix_spawn_file_actions_addchdir_np(&actions, directory);
    // glibc 2.34: close_range in the child (Foundation's Process lists /proc/self/fd with a
    // readdir copy that reads past its buffer once about 1,300 descriptors are open).
    if (error == 0) error = posix_spawn_file_actions_addclosefrom_np(&actions, count);
    if (error == 0) error = posix_spawn(pid, path, &actions, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&actions);
    return error;
}
