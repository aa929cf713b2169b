/* suggest: optimal-string-alignment distance and the nearest known word. */
#include "common/suggest.h"

#include <ctype.h>
#include <string.h>

#define SUGGEST_MAX 64

size_t suggest_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la >= SUGGEST_MAX || lb >= SUGGEST_MAX)
        return (size_t)-1;
    /* d[i][j]: edits between the first i characters of a and the first j of b. */
    size_t d[SUGGEST_MAX][SUGGEST_MAX];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            size_t best = d[i - 1][j - 1] + (ca != cb);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

const char *suggest_nearest(const char *word, const char *const *known)
{
    size_t len = strlen(word);
    size_t limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
    const char *best = NULL;
    size_t best_d = limit + 1;
    for (const char *const *k = known; k && *k; k++) {
        size_t d = suggest_distance(word, *k);
        if (d < best_d) {
            best = *k;
            best_d = d;
        }
    }
    return best;
}
