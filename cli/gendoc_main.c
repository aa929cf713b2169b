/* gendoc_main: fabtop-gendoc, the build's generator of man pages and completion scripts
 * from the command tables (cli_gendoc.h); never installed.
 *   fabtop-gendoc man DIR DATE   DIR/fabtop.1 and DIR/fabtop-COMMAND.1 for every command
 *   fabtop-gendoc bash FILE      the bash completion script
 *   fabtop-gendoc zsh FILE       the zsh completion function (_fabtop)
 *   fabtop-gendoc schema-man SCHEMA PAGE DATE FILE
 *                                a file format's page (section 5) from its JSON Schema */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli_gendoc.h"
#include "common/jsonutil.h"

static int write_file(const char *path,
                      int (*gen)(const struct cli_command *, const char *, FILE *),
                      int (*gen_all)(FILE *), const struct cli_command *cmd, const char *date)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "fabtop-gendoc: %s: %s\n", path, strerror(errno));
        return 1;
    }
    int rc = gen ? gen(cmd, date, f) : gen_all(f);
    if (fclose(f) != 0 || rc < 0) {
        fprintf(stderr, "fabtop-gendoc: %s: write failed\n", path);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "man")) {
        int n;
        const struct cli_command *const *all = cli_commands(&n);
        for (int i = 0; i < n; i++) {
            char page[64], path[4096];
            cli_gendoc_page_name(all[i], page, sizeof(page));
            snprintf(path, sizeof(path), "%s/%s.1", argv[2], page);
            if (write_file(path, cli_gendoc_man, NULL, all[i], argv[3]))
                return 1;
        }
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "bash"))
        return write_file(argv[2], NULL, cli_gendoc_bash, NULL, NULL);
    if (argc == 3 && !strcmp(argv[1], "zsh"))
        return write_file(argv[2], NULL, cli_gendoc_zsh, NULL, NULL);
    if (argc == 6 && !strcmp(argv[1], "schema-man")) {
        cJSON *schema;
        struct ft_err err = {0};
        if (jsonutil_load(argv[2], &schema, &err) < 0) {
            fprintf(stderr, "fabtop-gendoc: %s\n", err.msg);
            return 1;
        }
        FILE *f = fopen(argv[5], "w");
        int rc = f ? cli_gendoc_schema_man(schema, argv[3], argv[4], f) : -errno;
        if (f && fclose(f) != 0)
            rc = -EIO;
        cJSON_Delete(schema);
        if (rc < 0) {
            fprintf(stderr, "fabtop-gendoc: %s: %s\n", argv[5], strerror(-rc));
            return 1;
        }
        return 0;
    }
    fprintf(stderr, "usage: fabtop-gendoc man DIR DATE | bash FILE | zsh FILE | schema-man "
                    "SCHEMA PAGE DATE FILE\n");
    return 64;
}
