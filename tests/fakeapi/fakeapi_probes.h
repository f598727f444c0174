/* fakeapi_probes.h: the probes src/report/registry.c lists after the real ones in the test suite's gpucheckup-fakeapi. */
extern const struct probe probe_fakeapi;
#define GPUCHECKUP_EXTRA_PROBE_ROWS &probe_fakeapi,
