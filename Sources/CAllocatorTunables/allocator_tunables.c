#include "allocator_tunables.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

const char *const earshot_tunables_variable = "GLIBC_TUNABLES";
const char *const earshot_tunables_restarted_variable = "EARSHOT_RESTARTED_FOR_TUNABLES";

static const char *const settings[] = {"glibc.malloc.tcache_count=0", "glibc.malloc.arena_max=2"};
enum { setting_count = sizeof settings / sizeof settings[0] };

/* The length of a setting's name, up to its '=' (or its end). */
static size_t name_length(const char *setting, size_t length) {
    const char *equals = memchr(setting, '=', length);
    return equals == NULL ? length : (size_t)(equals - setting);
}

/* Whether `current` names the tunable `setting` sets (the whole name, not a prefix). */
static int names(const char *current, const char *setting) {
    size_t wanted = name_length(setting, strlen(setting));
    for (const char *part = current; part != NULL && *part != '\0';) {
        const char *colon = strchr(part, ':');
        size_t length = colon == NULL ? strlen(part) : (size_t)(colon - part);
        if (name_length(part, length) == wanted && memcmp(part, setting, wanted) == 0) return 1;
        part = colon == NULL ? NULL : colon + 1;
    }
    return 0;
}

/* Appends `part` (of `length` bytes) to `result`, after a ':' unless it is the first. */
static void append(char *result, size_t *used, const char *part, size_t length) {
    if (length == 0) return;
    if (*used > 0) result[(*used)++] = ':';
    memcpy(result + *used, part, length);
    *used += length;
    result[*used] = '\0';
}

char *earshot_tunables_adding(const char *current) {
    int missing[setting_count];
    int any = 0;
    size_t size = (current == NULL ? 0 : strlen(current)) + 1;
    for (int index = 0; index < setting_count; index++) {
        missing[index] = !names(current, settings[index]);
        any |= missing[index];
        if (missing[index]) size += strlen(settings[index]) + 1;
    }
    if (!any) return NULL;
    char *result = malloc(size);
    if (result == NULL) return NULL;
    size_t used = 0;
    result[0] = '\0';
    for (const char *part = current; part != NULL && *part != '\0';) {
        const char *colon = strchr(part, ':');
        size_t length = colon == NULL ? strlen(part) : (size_t)(colon - part);
        append(result, &used, part, length);
        part = colon == NULL ? NULL : colon + 1;
    }
    for (int index = 0; index < setting_count; index++) {
        if (missing[index]) append(result, &used, settings[index], strlen(settings[index]));
    }
    return result;
}

static atomic_flag decided = ATOMIC_FLAG_INIT;

void earshot_allocator_tunables_apply(char **argv) {
    if (atomic_flag_test_and_set(&decided)) return;
    if (getenv(earshot_tunables_restarted_variable) != NULL) {
        unsetenv(earshot_tunables_restarted_variable);
        return;
    }
    if (argv == NULL || getauxval(AT_SECURE) != 0) return;
    const char *given = getenv(earshot_tunables_variable);
    char *current = given == NULL ? NULL : strdup(given);
    if (given != NULL && current == NULL) return;
    char *wanted = earshot_tunables_adding(current);
    if (wanted == NULL) {
        free(current);
        return;
    }
    /* The file's own path, not /proc/self/exe: the process keeps its name (comm). */
    char path[PATH_MAX + 1];
    ssize_t length = readlink("/proc/self/exe", path, PATH_MAX);
    if (length > 0) {
        path[length] = '\0';
        if (access(path, X_OK) == 0 && setenv(earshot_tunables_variable, wanted, 1) == 0
            && setenv(earshot_tunables_restarted_variable, "1", 1) == 0) {
            execv(path, argv);
        }
    }
    /* Still here: start as is. */
    unsetenv(earshot_tunables_restarted_variable);
    if (current != NULL) setenv(earshot_tunables_variable, current, 1);
    else unsetenv(earshot_tunables_variable);
    free(current);
    free(wanted);
}
