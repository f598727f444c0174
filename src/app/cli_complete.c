/* cli_complete.c: --completion: bash and zsh completion scripts made from the option table getopt parses. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

/* The values an option's value name stands for, where they are a fixed list; NULL for free text. */
static const char *complete_values(const char *metavar, char *buf, size_t len)
{
    if (!metavar)
        return NULL;
    if (strcmp(metavar, "FMT") == 0) {
        size_t at = 0;
        buf[0] = '\0';
        for (size_t i = 0; cli_format_names[i] && at < len; i++) {
            int w = snprintf(buf + at, len - at, "%s%s", i ? " " : "", cli_format_names[i]);
            at += w > 0 ? (size_t)w : 0;
        }
        return buf;
    }
    if (strcmp(metavar, "WHEN") == 0)
        return "auto always never";
    if (strcmp(metavar, "SHELL") == 0)
        return "bash zsh";
    return NULL;
}

static bool complete_is_path(const char *metavar)
{
    return metavar && (strcmp(metavar, "FILE") == 0 || strcmp(metavar, "PATH") == 0 || strcmp(metavar, "DIR") == 0);
}

/* "check cpu pci ... snapshot": the commands, space-separated, into BUF. */
static const char *complete_commands(char *buf, size_t len)
{
    cli_command_list(buf, len);
    char *w = buf;
    for (const char *r = buf; *r; r++)
        if (!(r[0] == ',' && r[1] == ' '))
            *w++ = *r == ',' ? ' ' : *r;
    *w = '\0';
    return buf;
}

struct complete_ctx {
    FILE *out;
    int pass; /* bash: 0 the option words, 1 paths, 2 fixed values, 3 free values; zsh: the specs */
};

static void complete_bash_option(void *arg, const char *name, bool has_value, const char *metavar)
{
    struct complete_ctx *c = arg;
    char vals[256];
    const char *v = complete_values(metavar, vals, sizeof(vals));
    if (c->pass == 0)
        fprintf(c->out, " --%s%s", name, has_value ? "=" : "");
    else if (c->pass == 1 && has_value && complete_is_path(metavar))
        fprintf(c->out, "    --%s) _filedir; return ;;\n", name);
    else if (c->pass == 2 && has_value && v)
        fprintf(c->out, "    --%s) COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return ;;\n", name, v);
    else if (c->pass == 3 && has_value && !v && !complete_is_path(metavar))
        fprintf(c->out, "    --%s) return ;;\n", name);
}

static int complete_bash(FILE *out)
{
    char cmds[1024];
    struct complete_ctx c = {.out = out};
    fputs("# bash completion for gpucheckup: made by `gpucheckup --completion=bash` from its option table\n"
          "_gpucheckup()\n"
          "{\n"
          "    local cur prev words cword split\n"
          "    _init_completion -s || return\n"
          "    case $prev in\n"
          "    -o) _filedir; return ;;\n",
          out);
    for (c.pass = 1; c.pass <= 3; c.pass++)
        if (cli_each_option(complete_bash_option, &c) < 0)
            return -1;
    fputs("    esac\n"
          "    $split && return\n"
          "    if [[ $cur == -* ]]; then\n"
          "        COMPREPLY=($(compgen -W '-o -q -v -h -V",
          out);
    c.pass = 0;
    if (cli_each_option(complete_bash_option, &c) < 0)
        return -1;
    fprintf(out,
            "' -- \"$cur\"))\n"
            "        [[ ${COMPREPLY-} == *= ]] && compopt -o nospace\n"
            "        return\n"
            "    fi\n"
            "    COMPREPLY=($(compgen -W '%s' -- \"$cur\"))\n"
            "}\n"
            "complete -F _gpucheckup gpucheckup\n",
            complete_commands(cmds, sizeof(cmds)));
    return 0;
}

static void complete_zsh_option(void *arg, const char *name, bool has_value, const char *metavar)
{
    struct complete_ctx *c = arg;
    char vals[256];
    const char *v = complete_values(metavar, vals, sizeof(vals));
    if (!has_value) {
        fprintf(c->out, "  '--%s' \\\n", name);
        return;
    }
    const char *mv = metavar ? metavar : "VALUE";
    if (v)
        fprintf(c->out, "  '--%s=[%s]:%s:(%s)' \\\n", name, mv, mv, v);
    else if (complete_is_path(metavar))
        fprintf(c->out, "  '--%s=[%s]:%s:_files' \\\n", name, mv, mv);
    else
        fprintf(c->out, "  '--%s=[%s]:%s: ' \\\n", name, mv, mv);
}

static int complete_zsh(FILE *out)
{
    char cmds[1024];
    struct complete_ctx c = {.out = out};
    fputs("#compdef gpucheckup\n"
          "# zsh completion for gpucheckup: made by `gpucheckup --completion=zsh` from its option table\n"
          "_arguments -s \\\n"
          "  '-o+[FILE]:FILE:_files' '-q' '-v' '-h' '-V' \\\n",
          out);
    if (cli_each_option(complete_zsh_option, &c) < 0)
        return -1;
    fprintf(out, "  '1:command:(%s)'\n", complete_commands(cmds, sizeof(cmds)));
    return 0;
}

int cli_print_completion(FILE *out, const char *shell)
{
    if (strcmp(shell, "bash") == 0)
        return complete_bash(out);
    if (strcmp(shell, "zsh") == 0)
        return complete_zsh(out);
    return -1;
}
