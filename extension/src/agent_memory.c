/*
 * agent_memory's one C function: the names of the memory.* settings a session has given a value.
 *
 * PostgreSQL keeps a setting it does not know (`set memory.wieght_dense = 1`) as a placeholder that
 * neither pg_settings nor current_setting() can list, so SQL alone cannot tell a typo from an unused
 * setting. memory_internal._settings_json() compares these names with memory.setting_definitions() and
 * names the unknown ones.
 */
#include "postgres.h"

#include "catalog/pg_type_d.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/guc_tables.h"

PG_MODULE_MAGIC;

#define PREFIX "memory."

PG_FUNCTION_INFO_V1(agent_memory_session_setting_names);

/* The names (without "memory.") of the placeholder settings under memory.* that hold a non-empty value. */
Datum
agent_memory_session_setting_names(PG_FUNCTION_ARGS)
{
	ArrayBuildState *names = initArrayResult(TEXTOID, CurrentMemoryContext, false);
#if PG_VERSION_NUM >= 160000
	int			count;
	struct config_generic **variables = get_guc_variables(&count);
#else
	int			count = GetNumConfigOptions();
	struct config_generic **variables = get_guc_variables();
#endif

	for (int i = 0; i < count; i++)
	{
		struct config_generic *variable = variables[i];
		const char *value;

		/* Setting names are matched in any case: set_config('MEMORY.x', ...) is memory.x. */
		if (!(variable->flags & GUC_CUSTOM_PLACEHOLDER) ||
			pg_strncasecmp(variable->name, PREFIX, strlen(PREFIX)) != 0)
			continue;
		value = GetConfigOption(variable->name, true, false);
		if (value == NULL || value[0] == '\0')
			continue;
		accumArrayResult(names, CStringGetTextDatum(variable->name + strlen(PREFIX)), false, TEXTOID,
						 CurrentMemoryContext);
	}
	PG_RETURN_DATUM(makeArrayResult(names, CurrentMemoryContext));
}
