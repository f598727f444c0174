/* cli.h: command-line options of gpucheckup, parsed with getopt_long into one struct. */
#ifndef GPUCHECKUP_CLI_H
#define GPUCHECKUP_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "options.h"

/* Parse ARGV into O (defaults first), and each registered probe's own options into its storage (their
 * defaults first: struct probe.options_reset). The commands are "check", "list", "snapshot" and each
 * probe's name. Returns 0, or -1 with a message naming the option and what is
 * wrong in ERR. Strings in O point into ARGV except the requires array (free with cli_options_free). */
int cli_parse(int argc, char **argv, struct cli_options *o, char *err, size_t errlen);
void cli_options_free(struct cli_options *o);
/* True when ARGV asks for JSON output (used to shape error output when parsing fails). */
bool cli_wants_json(int argc, char **argv);
/* True when ARGV asks for --health (so a usage error still answers with the health line). */
bool cli_wants_health(int argc, char **argv);
/* Call FN for every long option getopt knows (the core's, then each probe's, in --help's order): its name,
 * whether it takes a value, and the value's name in --help ("FILE"; NULL when none is known). 0, or -1
 * when the table cannot be built. */
int cli_each_option(void (*fn)(void *arg, const char *name, bool has_value, const char *metavar), void *arg);
/* Every command, comma-separated in --help's order, into BUF; returns BUF. */
const char *cli_command_list(char *buf, size_t len);
/* --completion: the completion script for SHELL ("bash" or "zsh") on OUT (cli_complete.c). 0 or -1. */
int cli_print_completion(FILE *out, const char *shell);
/* --help: the commands and each probe's options from the registry, the rest from here. */
void cli_print_help(FILE *out);

#endif
