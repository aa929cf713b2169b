/* cli_gendoc: man pages and completion from the command tables (cli_gendoc.h). */
#include "cli/cli_gendoc.h"

#include <errno.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli.h"
#include "engine/flow/mix.h"
#include "engine/model/model_config.h"
#include "tui/theme.h"

/* ---- roff ---- */

/* Text for a roff input line: backslashes as \e, '-' as \- (a hyphen would be a dash in
 * option names, man-pages(7)), and a line that would start with '.' or '\'' guarded by \&
 * so it is not read as a request (groff(7)). */
static void roff(FILE *f, const char *s, size_t n, bool line_start)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        char c = s[i];
        if (line_start && (c == '.' || c == '\''))
            fputs("\\&", f);
        line_start = false;
        if (c == '\\')
            fputs("\\e", f);
        else if (c == '-')
            fputs("\\-", f);
        else
            fputc(c, f);
    }
}

static void roff_str(FILE *f, const char *s, bool line_start)
{
    roff(f, s, strlen(s), line_start);
}

/* Lines of text (each '\n'-ended or the last), each one roff input line, leading blanks
 * trimmed (the page fills them); an empty line ends a paragraph. */
static void roff_lines(FILE *f, const char *s)
{
    while (*s) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        const char *t = s;
        while (n > 0 && (*t == ' ' || *t == '\t'))
            t++, n--;
        while (n > 0 && (t[n - 1] == ' ' || t[n - 1] == '\t'))
            n--;
        if (n == 0) {
            fputs(".PP\n", f);
        } else {
            roff(f, t, n, true);
            fputc('\n', f);
        }
        if (!nl)
            break;
        s = nl + 1;
    }
}

/* Preformatted lines (tables, statuses), as --help shows them. */
static void roff_nofill(FILE *f, const char *s)
{
    fputs(".nf\n", f);
    while (*s) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        while (n > 0 && s[n - 1] == ' ')
            n--;
        if (n == 0)
            fputs(".sp\n", f);
        else {
            roff(f, s, n, true);
            fputc('\n', f);
        }
        if (!nl)
            break;
        s = nl + 1;
    }
    fputs(".fi\n", f);
}

void cli_gendoc_page_name(const struct cli_command *cmd, char *buf, size_t len)
{
    snprintf(buf, len, cmd->name[0] ? "fabtop-%s" : "fabtop", cmd->name);
}

/* One option as a tagged paragraph: its names in bold, its argument in italics. */
static void man_opt(FILE *f, const struct cli_opt *o)
{
    fputs(".TP\n", f);
    if (o->short_name)
        fprintf(f, "\\fB\\-%c\\fR, ", o->short_name);
    fputs("\\fB\\-\\-", f);
    roff_str(f, o->name, false);
    fputs("\\fR", f);
    if (o->arg_name) {
        fputs(o->arg == CLI_ARG_REQUIRED ? " \\fI" : "\\fI", f);
        roff_str(f, o->arg_name, false);
        fputs("\\fR", f);
    }
    fputc('\n', f);
    char help[1024];
    cli_opt_help(o, help, sizeof(help));
    roff_lines(f, help);
    if (o->kind == CLI_V_ENUM && o->values) {
        fputs("One of:", f);
        for (const struct cli_enum *e = o->values; e->name; e++)
            if (!e->alias) {
                fputs(" \\fB", f);
                roff_str(f, e->name, false);
                fputs("\\fR", f);
            }
        fputs(".\n", f);
    }
}

/* Write page to out with every text line at most 80 bytes (mandoc -Tlint's style rule): a
 * filled line breaks at a space (the next line guarded as roff_lines does); a line of a
 * no-fill block breaks at a space with an escaped newline, which joins the two input lines
 * back into one output line (groff(7), "\newline"). Requests (lines starting with '.') and
 * the tag line after .TP stay whole. */
static void write_wrapped(const char *page, FILE *out)
{
    bool nofill = false, tag = false;
    const char *s = page;
    while (*s) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        if (s[0] == '.') {
            if (!strncmp(s, ".nf", 3))
                nofill = true;
            else if (!strncmp(s, ".fi", 3))
                nofill = false;
            tag = !strncmp(s, ".TP", 3);
            fwrite(s, 1, n, out);
        } else if (tag) {
            tag = false;
            fwrite(s, 1, n, out);
        } else {
            const char *t = s;
            size_t left = n;
            while (left > 80) {
                size_t cut = 0;
                for (size_t k = nofill ? 78 : 80; k > 8 && !cut; k--)
                    if (t[k] == ' ' && t[k - 1] != '\\')
                        cut = k;
                if (!cut)
                    break;
                if (nofill) {
                    fwrite(t, 1, cut + 1, out);
                    fputs("\\\n", out);
                    t += cut + 1;
                    left -= cut + 1;
                } else {
                    fwrite(t, 1, cut, out);
                    fputc('\n', out);
                    t += cut + 1;
                    left -= cut + 1;
                }
                if (left && (*t == '.' || *t == '\''))
                    fputs("\\&", out);
            }
            fwrite(t, 1, left, out);
        }
        fputc('\n', out);
        if (!nl)
            break;
        s = nl + 1;
    }
}

/* A page written into the memory stream f (text its buffer) goes to out with its long
 * lines wrapped; -EIO when either fails. */
static int page_flush(FILE *f, char **text, FILE *out)
{
    if (fclose(f) != 0) {
        free(*text);
        return -EIO;
    }
    write_wrapped(*text, out);
    free(*text);
    return ferror(out) ? -EIO : 0;
}

int cli_gendoc_man(const struct cli_command *cmd, const char *date, FILE *out)
{
    char *text = NULL;
    size_t text_len = 0;
    FILE *f = open_memstream(&text, &text_len);
    if (!f)
        return -errno;
    char page[64], upper[64];
    cli_gendoc_page_name(cmd, page, sizeof(page));
    size_t i = 0;
    for (; page[i] && i + 1 < sizeof(upper); i++)
        upper[i] = (char)(page[i] >= 'a' && page[i] <= 'z' ? page[i] - 32 : page[i]);
    upper[i] = '\0';
    fprintf(f, ".\\\" Generated by fabtop-gendoc from the option tables (cli/cli_opts.h).\n");
    fprintf(f, ".TH %s 1 %s \"fabtop %s\" \"fabtop manual\"\n", upper, date, FABTOP_VERSION);
    fputs(".SH NAME\n", f);
    roff_str(f, page, true);
    fputs(" \\- ", f);
    roff_str(f, cmd->summary, false);
    fputc('\n', f);

    /* The synopsis: the "Usage:" line and the lines indented under it; the rest describes. */
    fputs(".SH SYNOPSIS\n.nf\n", f);
    const char *s = cmd->synopsis;
    bool usage = true;
    const char *desc = "";
    while (*s && usage) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        if (!strncmp(s, "Usage: ", 7)) {
            roff(f, s + 7, n - 7, true);
            fputc('\n', f);
        } else if (s[0] == ' ') {
            const char *t = s;
            while (*t == ' ')
                t++;
            roff(f, t, n - (size_t)(t - s), true);
            fputc('\n', f);
        } else {
            usage = false;
            desc = s;
            break;
        }
        s = nl ? nl + 1 : s + n;
    }
    if (!cmd->name[0])
        fputs("fabtop COMMAND [OPTIONS]\n", f);
    fputs(".fi\n", f);
    if (!cmd->name[0])
        fputs(".SH DESCRIPTION\nAn explorer for GPU\\-cluster fabrics: topology, traffic tests, "
              "counters.\nWithout a command, fabtop opens the interactive explorer; with one, it "
              "runs\nthat batch command for scripts (see COMMANDS).\n.PP\n",
              f);
    if (*desc) {
        if (cmd->name[0])
            fputs(".SH DESCRIPTION\n", f);
        roff_lines(f, desc);
    }

    fputs(".SH OPTIONS\n", f);
    for (int k = 0; k < cmd->nopts; k++) {
        const struct cli_opt *o = &cmd->opts[k];
        if (o->kind == CLI_V_SECTION) {
            fputs(".PP\n", f);
            roff_lines(f, o->help);
        } else if (o->help) {
            man_opt(f, o);
        }
    }
    for (int k = 0; k < 2; k++)
        man_opt(f, &cli_std_opts[k]);

    if (!cmd->name[0]) {
        fputs(".SH COMMANDS\n", f);
        int n;
        const struct cli_command *const *all = cli_commands(&n);
        for (int k = 0; k < n; k++)
            if (all[k]->name[0]) {
                fprintf(f, ".TP\n\\fBfabtop %s\\fR\n", all[k]->name);
                roff_str(f, all[k]->summary, true);
                fprintf(f, "; see \\fBfabtop\\-%s\\fR(1).\n", all[k]->name);
            }
    }
    if (cmd->epilogue) {
        fputs(".SH NOTES\n", f);
        roff_nofill(f, cmd->epilogue);
    }
    /* The explorer's page names every command's; a command's names the explorer's. */
    fputs(".SH SEE ALSO\n", f);
    int n;
    const struct cli_command *const *all = cli_commands(&n);
    for (int k = 0; k < n; k++) {
        if (all[k] == cmd || (cmd->name[0] && all[k]->name[0]))
            continue;
        char other[64];
        cli_gendoc_page_name(all[k], other, sizeof(other));
        fputs(".BR ", f);
        roff_str(f, other, false);
        fputs(" (1),\n", f);
    }
    fputs(".BR fabtop\\-mix (5),\n.BR fabtop\\-results (5)\n", f);
    return page_flush(f, &text, out);
}

/* ---- file formats, from their schemas ---- */

/* A local reference ("#/$defs/NAME") resolved in root; the node itself otherwise. */
static const cJSON *schema_resolve(const cJSON *root, const cJSON *node)
{
    for (int hops = 0; hops < 8 && node; hops++) {
        const cJSON *ref = cJSON_GetObjectItemCaseSensitive(node, "$ref");
        if (!cJSON_IsString(ref) || strncmp(ref->valuestring, "#/$defs/", 8))
            return node;
        const cJSON *defs = cJSON_GetObjectItemCaseSensitive(root, "$defs");
        const cJSON *to = cJSON_GetObjectItemCaseSensitive(defs, ref->valuestring + 8);
        if (!to)
            return node;
        node = to;
    }
    return node;
}

/* A JSON value as the page shows it (a default, an enum member). */
static void schema_value(FILE *f, const cJSON *v)
{
    char *t = cJSON_PrintUnformatted(v);
    if (t) {
        roff_str(f, t, false);
        cJSON_free(t);
    }
}

/* A JSON value's type name. */
static const char *json_type(const cJSON *v)
{
    return cJSON_IsString(v)   ? "string"
           : cJSON_IsNumber(v) ? "number"
           : cJSON_IsBool(v)   ? "boolean"
           : cJSON_IsNull(v)   ? "null"
           : cJSON_IsArray(v)  ? "array"
                               : "object";
}

/* What a node without "type" holds: its const's or enum's type, its alternatives' types
 * ("integer or string"), or the other file it refers to ("see mix.schema.json"). */
static void schema_untyped(FILE *f, const cJSON *root, const cJSON *n, int depth)
{
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(n, "$ref");
    if (cJSON_IsString(ref) && strncmp(ref->valuestring, "#/", 2)) {
        fputs("as ", f);
        roff_str(f, ref->valuestring, false);
        fputs(" describes", f);
        return;
    }
    n = schema_resolve(root, n);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(n, "type");
    const cJSON *cst = cJSON_GetObjectItemCaseSensitive(n, "const");
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(n, "enum");
    const cJSON *alt = cJSON_GetObjectItemCaseSensitive(n, "oneOf");
    if (!alt)
        alt = cJSON_GetObjectItemCaseSensitive(n, "anyOf");
    if (cJSON_IsString(type)) {
        roff_str(f, type->valuestring, false);
    } else if (cst) {
        fputs(json_type(cst), f);
    } else if (cJSON_IsArray(en) && cJSON_GetArraySize(en) > 0) {
        fputs(json_type(cJSON_GetArrayItem(en, 0)), f);
    } else if (cJSON_IsArray(alt) && depth < 3) {
        const cJSON *b;
        bool first = true;
        cJSON_ArrayForEach(b, alt)
        {
            fputs(first ? "" : " or ", f);
            schema_untyped(f, root, b, depth + 1);
            first = false;
        }
    } else {
        fputs("any JSON value", f);
    }
}

/* "string", "number or null", with the range, default and unit after it. */
static void schema_kind(FILE *f, const cJSON *root, const cJSON *n)
{
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(n, "type");
    fputc('(', f);
    if (cJSON_IsString(type)) {
        roff_str(f, type->valuestring, false);
    } else if (cJSON_IsArray(type)) {
        const cJSON *t;
        bool first = true;
        cJSON_ArrayForEach(t, type)
        {
            if (!cJSON_IsString(t))
                continue;
            fputs(first ? "" : " or ", f);
            roff_str(f, t->valuestring, false);
            first = false;
        }
    } else {
        schema_untyped(f, root, n, 0);
    }
    const cJSON *min = cJSON_GetObjectItemCaseSensitive(n, "minimum");
    const cJSON *max = cJSON_GetObjectItemCaseSensitive(n, "maximum");
    if (cJSON_IsNumber(min) && cJSON_IsNumber(max))
        fprintf(f, ", %g to %g", min->valuedouble, max->valuedouble);
    else if (cJSON_IsNumber(min))
        fprintf(f, ", at least %g", min->valuedouble);
    else if (cJSON_IsNumber(max))
        fprintf(f, ", at most %g", max->valuedouble);
    const cJSON *unit = cJSON_GetObjectItemCaseSensitive(n, "x-unit");
    if (cJSON_IsString(unit)) {
        fputs(", in ", f);
        roff_str(f, unit->valuestring, false);
    }
    const cJSON *cst = cJSON_GetObjectItemCaseSensitive(n, "const");
    if (cst) {
        fputs(", always \\fB", f);
        schema_value(f, cst);
        fputs("\\fR", f);
    }
    const cJSON *def = cJSON_GetObjectItemCaseSensitive(n, "default");
    if (def) {
        fputs(", default \\fB", f);
        schema_value(f, def);
        fputs("\\fR", f);
    }
    fputs(")\n", f);
}

static void schema_keys(FILE *f, const cJSON *root, const cJSON *node, const char *prefix,
                        int depth);

/* One key's entry, then the keys under it (an object's, or an array's items'). */
static void schema_key(FILE *f, const cJSON *root, const char *name, const cJSON *n,
                       const char *prefix, int depth)
{
    n = schema_resolve(root, n);
    char path[512];
    snprintf(path, sizeof(path), "%s%s", prefix, name);
    fputs(".TP\n\\fB", f);
    roff_str(f, path, false);
    fputs("\\fR ", f);
    schema_kind(f, root, n);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(n, "description");
    if (cJSON_IsString(d)) {
        roff_lines(f, d->valuestring);
    }
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(n, "enum");
    if (cJSON_IsArray(e)) {
        fputs(".br\nOne of:", f);
        const cJSON *v;
        bool first = true;
        cJSON_ArrayForEach(v, e)
        {
            fputs(first ? " \\fB" : ", \\fB", f);
            schema_value(f, v);
            fputs("\\fR", f);
            first = false;
        }
        fputs(".\n", f);
    }
    char sub[512];
    const cJSON *items = schema_resolve(root, cJSON_GetObjectItemCaseSensitive(n, "items"));
    if (items && cJSON_GetObjectItemCaseSensitive(items, "properties")) {
        snprintf(sub, sizeof(sub), "%s[].", path);
        schema_keys(f, root, items, sub, depth + 1);
    }
    snprintf(sub, sizeof(sub), "%s.", path);
    schema_keys(f, root, n, sub, depth + 1);
}

/* The keys of an object node: its properties, then those of its alternatives (anyOf, oneOf,
 * allOf, if-then), each key once. */
static void schema_keys(FILE *f, const cJSON *root, const cJSON *node, const char *prefix,
                        int depth)
{
    node = schema_resolve(root, node);
    if (!node || depth > 8)
        return;
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(node, "properties"))
        schema_key(f, root, p->string, p, prefix, depth);
    static const char *const alts[] = {"allOf", "anyOf", "oneOf", NULL};
    for (int a = 0; alts[a]; a++) {
        const cJSON *b;
        cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(node, alts[a]))
            schema_keys(f, root, b, prefix, depth + 1);
    }
    schema_keys(f, root, cJSON_GetObjectItemCaseSensitive(node, "then"), prefix, depth + 1);
}

/* The format an allOf branch selects: {"if": {"properties": {"format": {"const": X}}}}. */
static const char *branch_format(const cJSON *b)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(b, "if"),
                                             "properties"),
            "format"),
        "const");
    return cJSON_IsString(c) ? c->valuestring : NULL;
}

static bool has_format_branches(const cJSON *schema)
{
    const cJSON *b;
    cJSON_ArrayForEach(
        b, cJSON_GetObjectItemCaseSensitive(schema, "allOf")) if (branch_format(b)) return true;
    return false;
}

int cli_gendoc_schema_man(const struct cJSON *schema, const char *page, const char *date, FILE *out)
{
    char *text = NULL;
    size_t text_len = 0;
    FILE *f = open_memstream(&text, &text_len);
    if (!f)
        return -errno;
    char upper[64];
    size_t i = 0;
    for (; page[i] && i + 1 < sizeof(upper); i++)
        upper[i] = (char)(page[i] >= 'a' && page[i] <= 'z' ? page[i] - 32 : page[i]);
    upper[i] = '\0';
    const cJSON *title = cJSON_GetObjectItemCaseSensitive(schema, "title");
    const cJSON *desc = cJSON_GetObjectItemCaseSensitive(schema, "description");
    fputs(".\\\" Generated by fabtop-gendoc from the format's JSON Schema (docs/schema/).\n", f);
    fprintf(f, ".TH %s 5 %s \"fabtop %s\" \"fabtop manual\"\n.SH NAME\n", upper, date,
            FABTOP_VERSION);
    roff_str(f, page, true);
    fputs(" \\- ", f);
    roff_str(f, cJSON_IsString(title) ? title->valuestring : page, false);
    fputs("\n.SH DESCRIPTION\n", f);
    if (cJSON_IsString(desc))
        roff_lines(f, desc->valuestring);
    fputs(".PP\nThe JSON Schema this page is generated from is installed beside it as\n\\fB", f);
    roff_str(f, page + (strncmp(page, "fabtop-", 7) ? 0 : 7), false);
    fputs(".schema.json\\fR in the documentation directory.\n", f);
    /* A document of several formats (one alternative per "format"): a section each. */
    const cJSON *branches = cJSON_GetObjectItemCaseSensitive(schema, "oneOf");
    if (!branches)
        branches = cJSON_GetObjectItemCaseSensitive(schema, "anyOf");
    if (cJSON_IsArray(branches) && !cJSON_GetObjectItemCaseSensitive(schema, "properties")) {
        const cJSON *b;
        cJSON_ArrayForEach(b, branches)
        {
            const cJSON *r = schema_resolve(schema, b);
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(r, "title");
            fputs(".SH \"", f);
            roff_str(f, cJSON_IsString(t) ? t->valuestring : "KEYS", false);
            fputs("\"\n", f);
            const cJSON *d = cJSON_GetObjectItemCaseSensitive(r, "description");
            if (cJSON_IsString(d)) {
                roff_lines(f, d->valuestring);
            }
            schema_keys(f, schema, r, "", 0);
        }
    } else if (has_format_branches(schema)) {
        /* One document kind per "format" (allOf: if format is X then $defs/X): the common
         * keys, then a section per kind. */
        fputs(".SH KEYS\n", f);
        const cJSON *p;
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(schema, "properties"))
            schema_key(f, schema, p->string, p, "", 0);
        const cJSON *b;
        cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(schema, "allOf"))
        {
            const char *fmt = branch_format(b);
            const cJSON *then = schema_resolve(schema, cJSON_GetObjectItemCaseSensitive(b, "then"));
            if (!fmt || !then)
                continue;
            fputs(".SH \"", f);
            for (const char *c = fmt; *c; c++)
                fputc(*c >= 'a' && *c <= 'z' ? *c - 32 : *c, f);
            fputs(" DOCUMENTS\"\n", f);
            fputs("Documents whose \\fBformat\\fR is \\fB\"", f);
            roff_str(f, fmt, false);
            fputs("\"\\fR.\n", f);
            const cJSON *d = cJSON_GetObjectItemCaseSensitive(then, "description");
            if (cJSON_IsString(d))
                roff_lines(f, d->valuestring);
            schema_keys(f, schema, then, "", 0);
        }
    } else {
        fputs(".SH KEYS\n", f);
        schema_keys(f, schema, schema, "", 0);
    }
    fputs(".SH SEE ALSO\n.BR fabtop (1),\n.BR fabtop\\-run (1),\n.BR fabtop\\-report (1)\n", f);
    return page_flush(f, &text, out);
}

/* ---- completion ---- */

/* What completes an option's argument, as a word the scripts switch on. */
static const char *arg_kind(const struct cli_opt *o)
{
    if (o->arg == CLI_ARG_NONE)
        return "none";
    if (o->kind == CLI_V_ENUM)
        return "enum";
    switch (o->complete) {
    case CLI_C_FILE:
        return "file";
    case CLI_C_DIR:
        return "dir";
    case CLI_C_HOST:
        return "host";
    case CLI_C_MIX:
        return "mixes";
    case CLI_C_THEME:
        return "themes";
    case CLI_C_MODEL:
        return "models";
    case CLI_C_NONE:
        break;
    }
    return "value";
}

/* Every option of cmd that --help shows, its own table then -h and -V. */
static int opt_count(const struct cli_command *cmd)
{
    return cmd->nopts + 2;
}

static const struct cli_opt *opt_at(const struct cli_command *cmd, int i)
{
    const struct cli_opt *o = i < cmd->nopts ? &cmd->opts[i] : &cli_std_opts[i - cmd->nopts];
    return o->kind == CLI_V_SECTION || !o->help ? NULL : o;
}

/* The enum's offered names, space-separated. */
static void enum_words(FILE *f, const struct cli_opt *o)
{
    for (const struct cli_enum *e = o->values; e && e->name; e++)
        if (!e->alias)
            fprintf(f, "%s%s", e == o->values ? "" : " ", e->name);
}

/* The shell function name part for a command ("explore" for the explorer). */
static const char *fn_name(const struct cli_command *cmd)
{
    return cmd->name[0] ? cmd->name : "explore";
}

int cli_gendoc_bash(FILE *f)
{
    int n;
    const struct cli_command *const *all = cli_commands(&n);
    fputs("# bash completion for fabtop(1). Generated by fabtop-gendoc from the option tables\n"
          "# (cli/cli_opts.h), as --help and the man pages are; names of presets, themes and\n"
          "# models come from the fabtop being completed (fabtop __complete KIND).\n\n",
          f);
    /* Per command: the options, and what each option's argument is. */
    for (int c = 0; c < n; c++) {
        const struct cli_command *cmd = all[c];
        fprintf(f, "_fabtop_opts_%s='", fn_name(cmd));
        bool first = true;
        for (int i = 0; i < opt_count(cmd); i++) {
            const struct cli_opt *o = opt_at(cmd, i);
            if (!o)
                continue;
            fprintf(f, "%s--%s", first ? "" : " ", o->name);
            first = false;
            if (o->short_name)
                fprintf(f, " -%c", o->short_name);
        }
        fputs("'\n", f);
        fprintf(f, "_fabtop_arg_%s() {\n    case $1 in\n", fn_name(cmd));
        for (int i = 0; i < opt_count(cmd); i++) {
            const struct cli_opt *o = opt_at(cmd, i);
            if (!o || o->arg != CLI_ARG_REQUIRED)
                continue;
            fprintf(f, "    --%s", o->name);
            if (o->short_name)
                fprintf(f, " | -%c", o->short_name);
            if (o->kind == CLI_V_ENUM) {
                fputs(") echo 'enum ", f);
                enum_words(f, o);
                fputs("' ;;\n", f);
            } else {
                fprintf(f, ") echo %s ;;\n", arg_kind(o));
            }
        }
        fputs("    *) echo none ;;\n    esac\n}\n", f);
    }
    fputs("\n_fabtop() {\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    local self=${COMP_WORDS[0]} cmd=explore kind\n"
          "    COMPREPLY=()\n"
          "    # The command is the first word after fabtop, when it is not an option.\n"
          "    if ((COMP_CWORD > 1)) && [[ ${COMP_WORDS[1]} != -* ]]; then\n"
          "        cmd=${COMP_WORDS[1]//-/_}\n"
          "    elif ((COMP_CWORD == 1)) && [[ $cur != -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"$(\"$self\" __complete commands 2>/dev/null)\" "
          "-- \"$cur\"))\n"
          "        return 0\n"
          "    fi\n"
          "    declare -F \"_fabtop_arg_$cmd\" >/dev/null || return 0\n"
          "    kind=$(\"_fabtop_arg_$cmd\" \"$prev\")\n"
          "    case $kind in\n"
          "    none) ;;\n"
          "    enum\\ *) COMPREPLY=($(compgen -W \"${kind#enum }\" -- \"$cur\")); return 0 ;;\n"
          "    file) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\")); "
          "return 0 ;;\n"
          "    dir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\")); "
          "return 0 ;;\n"
          "    host) COMPREPLY=($(compgen -A hostname -- \"$cur\")); return 0 ;;\n"
          "    mixes | themes | models)\n"
          "        # A name, or a file of that kind.\n"
          "        compopt -o filenames 2>/dev/null\n"
          "        COMPREPLY=($(compgen -W \"$(\"$self\" __complete \"$kind\" 2>/dev/null)\" -- "
          "\"$cur\") $(compgen -f -X '!*.json' -- \"$cur\") $(compgen -d -- \"$cur\"))\n"
          "        return 0 ;;\n"
          "    *) return 0 ;;\n"
          "    esac\n"
          "    local opts_var=_fabtop_opts_$cmd\n"
          "    if [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W \"${!opts_var}\" -- \"$cur\"))\n"
          "    elif [[ $cmd != explore ]]; then\n"
          "        compopt -o filenames 2>/dev/null\n"
          "        COMPREPLY=($(compgen -f -- \"$cur\"))\n"
          "    fi\n"
          "    return 0\n"
          "}\n"
          "complete -F _fabtop fabtop\n",
          f);
    return ferror(f) ? -EIO : 0;
}

/* Text for a zsh _arguments description: no ']', ':', '\'' or '\\' (the spec's own
 * characters), the help's lines joined into one. */
static void zsh_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\n')
            fputc(' ', f);
        else if (*s == '[' || *s == ']')
            fputc(*s == '[' ? '(' : ')', f);
        else if (*s == ':')
            fputs(" -", f);
        else if (*s == '\'')
            fputc('`', f);
        else if (*s != '\\')
            fputc(*s, f);
    }
}

int cli_gendoc_zsh(FILE *f)
{
    int n;
    const struct cli_command *const *all = cli_commands(&n);
    fputs("#compdef fabtop\n"
          "# zsh completion for fabtop(1). Generated by fabtop-gendoc from the option tables\n"
          "# (cli/cli_opts.h); names of presets, themes and models come from fabtop itself.\n\n"
          "# The fabtop being completed, as typed: _fabtop keeps it before it shifts words for a\n"
          "# command's function, whose words[1] is then the command's name. The kind of names\n"
          "# is the last argument: _arguments puts its description options before it.\n"
          "_fabtop_names() {\n"
          "    local kind=${@[-1]}\n"
          "    local -a names\n"
          "    names=(${(f)\"$(${_fabtop_self:-$words[1]} __complete $kind 2>/dev/null)\"})\n"
          "    _alternative \"names:$kind:(${names[*]})\" 'files:file:_files -g \"*.json\"'\n"
          "}\n\n",
          f);
    for (int c = 0; c < n; c++) {
        const struct cli_command *cmd = all[c];
        fprintf(f, "_fabtop_%s() {\n    _arguments -s \\\n", fn_name(cmd));
        for (int i = 0; i < opt_count(cmd); i++) {
            const struct cli_opt *o = opt_at(cmd, i);
            if (!o)
                continue;
            char help[1024];
            cli_opt_help(o, help, sizeof(help));
            fputs("        ", f);
            if (o->short_name)
                fprintf(f, "'(-%c --%s)'{-%c,--%s}'", o->short_name, o->name, o->short_name,
                        o->name);
            else
                fprintf(f, "'--%s%s", o->name, o->arg == CLI_ARG_OPTIONAL ? "=-" : "");
            fputc('[', f);
            zsh_text(f, help);
            fputc(']', f);
            if (o->arg == CLI_ARG_REQUIRED) {
                fputc(':', f);
                zsh_text(f, o->arg_name ? o->arg_name : "value");
                const char *k = arg_kind(o);
                if (!strcmp(k, "enum")) {
                    fputs(":(", f);
                    enum_words(f, o);
                    fputc(')', f);
                } else if (!strcmp(k, "file")) {
                    fputs(":_files", f);
                } else if (!strcmp(k, "dir")) {
                    fputs(":_files -/", f);
                } else if (!strcmp(k, "host")) {
                    fputs(":_hosts", f);
                } else if (!strcmp(k, "value")) {
                    fputs(": ", f);
                } else {
                    fprintf(f, ":_fabtop_names %s", k);
                }
            }
            fputs("' \\\n", f);
        }
        fputs(cmd->name[0] ? "        '*:file:_files'\n}\n\n" : "        '1:command:->cmd'\n}\n\n",
              f);
    }
    fputs("_fabtop() {\n"
          "    local _fabtop_self=$words[1]\n"
          "    local -a cmds\n"
          "    cmds=(\n",
          f);
    for (int c = 0; c < n; c++)
        if (all[c]->name[0]) {
            fprintf(f, "        '%s:", all[c]->name);
            zsh_text(f, all[c]->summary);
            fputs("'\n", f);
        }
    fputs("    )\n"
          "    if ((CURRENT == 2)) && [[ $words[2] != -* ]]; then\n"
          "        _describe -t commands 'fabtop command' cmds\n"
          "    elif ((CURRENT > 2)) && [[ $words[2] != -* ]] && "
          "(($+functions[_fabtop_${words[2]//-/_}])); then\n"
          "        local fn=_fabtop_${words[2]//-/_}\n"
          "        shift words\n"
          "        ((CURRENT--))\n"
          "        $fn\n"
          "    else\n"
          "        _fabtop_explore\n"
          "    fi\n"
          "}\n\n"
          "_fabtop \"$@\"\n",
          f);
    return ferror(f) ? -EIO : 0;
}

/* ---- names at Tab time ---- */

static void print_names(char **names, FILE *f)
{
    for (char **p = names; p && *p; p++)
        fprintf(f, "%s\n", *p);
}

int cli_gendoc_complete(const char *kind, FILE *f)
{
    if (!strcmp(kind, "commands")) {
        int n;
        const struct cli_command *const *all = cli_commands(&n);
        for (int i = 0; i < n; i++)
            if (all[i]->name[0])
                fprintf(f, "%s\n", all[i]->name);
    } else if (!strcmp(kind, "mixes")) {
        char **names = mix_list_presets();
        print_names(names, f);
        mix_free_names(names);
    } else if (!strcmp(kind, "themes")) {
        char **names = theme_list();
        print_names(names, f);
        theme_free_names(names);
    } else if (!strcmp(kind, "models")) {
        char **names = model_config_presets();
        print_names(names, f);
        model_config_free_names(names);
    } else {
        fprintf(stderr, "fabtop: __complete takes commands, mixes, themes or models, not '%s'\n",
                kind);
        return CLI_USAGE;
    }
    return CLI_OK;
}
