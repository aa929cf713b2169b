/* cli_gendoc: man pages (roff, man(7) macros) and shell completion (bash, zsh) generated from
 * the command tables (cli_opts.h), the same tables that print --help, so neither can drift
 * from the options fabtop takes. fabtop-gendoc writes them at build time; `fabtop __complete
 * KIND` lists the names a completion offers at Tab time. */
#ifndef CLI_GENDOC_H
#define CLI_GENDOC_H

#include <stdio.h>

#include "cli/cli_opts.h"

/* Write cmd's man page, section 1 ("fabtop" for the explorer, else "fabtop-NAME"). date is
 * the page's date (YYYY-MM-DD). Returns 0 or -errno of the write. */
int cli_gendoc_man(const struct cli_command *cmd, const char *date, FILE *f);
/* The page's name: "fabtop" or "fabtop-NAME". */
void cli_gendoc_page_name(const struct cli_command *cmd, char *buf, size_t len);
/* A file format's page, section 5, from its JSON Schema (docs/schema/): the title and
 * description, then every key (nested ones by dotted path, "flows[].local.ip") with its
 * type, default, range, unit (the "x-unit" annotation) and description. page is the page's
 * name ("fabtop-mix"). */
struct cJSON;
int cli_gendoc_schema_man(const struct cJSON *schema, const char *page, const char *date, FILE *f);
/* The bash and the zsh completion scripts for every command. */
int cli_gendoc_bash(FILE *f);
int cli_gendoc_zsh(FILE *f);
/* `fabtop __complete KIND`: print the names of kind ("commands", "mixes", "themes",
 * "models"), one per line. 0, or 64 for an unknown kind. */
int cli_gendoc_complete(const char *kind, FILE *f);

#endif
