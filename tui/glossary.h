/* glossary: one or two sentences for every term and counter the explorer shows, for
 * teaching new staff. Terms are listed here; counters come from the counter tables
 * (topo_ibcounters and the engine's counter registry) so the text lives in one place. */
#ifndef GLOSSARY_H
#define GLOSSARY_H

struct glossary_entry {
    const char *term;
    const char *text;
};

/* The explanation of a term or counter name, or NULL. Case-insensitive. */
const char *glossary_lookup(const char *term);
/* All entries (terms first, then counters), for the help view; *n gets the count. The
 * array is built once and stays valid. */
const struct glossary_entry *glossary_all(int *n);

#endif
