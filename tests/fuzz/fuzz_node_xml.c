/* hwloc XML node models.  tp_node_load_xml_buffer() checks and rewrites the
 * XML (node_xml.c) before hwloc sees it: hwloc only ever gets what passed
 * the check, in-process, as in slurmstepd. */
#include "fuzz.h"
#include "node/node_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tp_node *n = NULL;
	tp_error err;
	if (tp_node_load_xml_buffer((const char *)data, size, "fuzz.xml", &n, &err) == 0)
		tp_node_destroy(n);
	return 0;
}
