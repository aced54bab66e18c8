/* The fixed grammar of a JSON object, for response_format json_object and
 * /set format json.  Whitespace is bounded, one space or a newline and an
 * indentation (a model that keeps writing spaces still has to write the
 * object), and so are numbers' digits; strings are JSON's: no control
 * characters, the escapes it defines. */
#include "grammar_internal.h"

#include <string.h>

static const char json_gbnf[] =
    "root    ::= object\n"
    "value   ::= object | array | string | number | \"true\" | \"false\" | \"null\"\n"
    "object  ::= \"{\" ws ( string ws \":\" ws value ws ( \",\" ws string ws \":\" ws value ws )* )? \"}\"\n"
    "array   ::= \"[\" ws ( value ws ( \",\" ws value ws )* )? \"]\"\n"
    "string  ::= \"\\\"\" char* \"\\\"\"\n"
    "char    ::= [^\"\\\\\\x00-\\x1f] | \"\\\\\" ( [\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4} )\n"
    "number  ::= \"-\"? ( \"0\" | [1-9] [0-9]{0,15} ) ( \".\" [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,3} )?\n"
    "ws      ::= ( \" \" | \"\\n\" [ \\t]{0,20} )?\n";

const char *cf_grammar_json_text(void)
{
    return json_gbnf;
}

const char *cf_grammar_json_rules(void)
{
    return strchr(json_gbnf, '\n') + 1;
}

int cf_grammar_json(cf_grammar **out, cf_err *err)
{
    return cf_grammar_parse(json_gbnf, out, err);
}
