/* test_process_unit.c: unit tests of the process probe: systemd's unit-file syntax, node access by mode, group and ACL, library names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "process_internal.h"
#include "results/result_process.h"

static void unit_init(struct proc_unit *u)
{
    memset(u, 0, sizeof(*u));
    u->dynamic_user = u->private_devices = -1;
}

static int parse(struct proc_unit *u, const char *text)
{
    return proc_unit_parse(u, text, strlen(text));
}

static void test_syntax(void **state)
{
    (void)state;
    struct proc_unit u;
    unit_init(&u);
    assert_int_equal(parse(&u, "[Unit]\nUser=notme\n\n[Service]\n  User = ollama  \n# User=commented\n; Group=too\n"
                               "Environment=\"A=b c\" D=e 'F=g h' notanassignment\n"
                               "Environment=X=1 \\\n# a comment inside the continuation is skipped\n  Y=2\n"
                               "PrivateDevices=On\nDynamicUser=false\nSupplementaryGroups=render\r\n"
                               "SupplementaryGroups=video\n[Install]\nWantedBy=multi-user.target\nUser=notme\n"),
                     0);
    assert_string_equal(u.user, "ollama");
    assert_null(u.group);
    assert_int_equal(u.private_devices, 1);
    assert_int_equal(u.dynamic_user, 0);
    assert_string_equal(proc_env_get(&u.env, "A"), "b c");
    assert_string_equal(proc_env_get(&u.env, "D"), "e");
    assert_string_equal(proc_env_get(&u.env, "F"), "g h");
    assert_string_equal(proc_env_get(&u.env, "X"), "1");
    assert_string_equal(proc_env_get(&u.env, "Y"), "2");
    assert_null(proc_env_get(&u.env, "notanassignment"));
    assert_int_equal(u.supp.n, 2);
    /* a drop-in: an empty value resets a list; a later assignment replaces an earlier one */
    assert_int_equal(parse(&u, "[Service]\nEnvironment=\nEnvironment=A=new\nSupplementaryGroups=\nUser=\n"
                               "PrivateDevices=\nDeviceAllow=/dev/kfd rw\nDeviceAllow=char-drm rw\n"),
                     0);
    assert_int_equal(u.env.n, 1);
    assert_string_equal(proc_env_get(&u.env, "A"), "new");
    assert_int_equal(u.supp.n, 0);
    assert_null(u.user);
    assert_int_equal(u.private_devices, -1);
    assert_int_equal(u.device_allow.n, 2);
    assert_string_equal(u.device_allow.v[1], "char-drm rw");
    /* an escape makes no control character */
    assert_int_equal(parse(&u, "[Service]\nEnvironment=\"E=a\\x1b[31m\\nb\"\n"), 0);
    assert_string_equal(proc_env_get(&u.env, "E"), "ax1b[31m?b");
    proc_unit_free(&u);
}

static struct proc_node node(unsigned mode, long uid, long gid)
{
    struct proc_node n;
    memset(&n, 0, sizeof(n));
    n.path = "/dev/dri/renderD128";
    n.mode = mode;
    n.uid = uid;
    n.gid = gid;
    return n;
}

static void test_access(void **state)
{
    (void)state;
    char why[96];
    struct proc_node n = node(0660, 0, 992);
    struct proc_cred bob = {.uid = 1001, .gids = {1001}, .n = 1};
    assert_false(proc_node_allows(&n, &bob, why, sizeof(why)));
    assert_string_equal(why, "others");
    proc_cred_add(&bob, 992);
    assert_true(proc_node_allows(&n, &bob, why, sizeof(why)));
    assert_string_equal(why, "its group");
    struct proc_cred root = {.uid = 0, .n = 0};
    assert_true(proc_node_allows(&n, &root, why, sizeof(why)));
    /* a dynamic user owns nothing, even a node of uid -1 */
    struct proc_cred dyn = {.uid = -1, .n = 0};
    struct proc_node odd = node(0600, -1, 0);
    assert_false(proc_node_allows(&odd, &dyn, why, sizeof(why)));
    /* ACL: user:1001:rw- under a mask of rw-, others nothing */
    static const unsigned char acl[] = {2, 0, 0, 0,   1, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,   2, 0, 6, 0, 0xe9, 3, 0, 0,
                                        4, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,   0x10, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,
                                        0x20, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
    memcpy(n.acl, acl, sizeof(acl));
    n.acl_len = sizeof(acl);
    struct proc_cred bob2 = {.uid = 1001, .gids = {1001}, .n = 1};
    assert_true(proc_node_allows(&n, &bob2, why, sizeof(why)));
    assert_string_equal(why, "an ACL entry for its uid 1001");
    /* the mask limits the named entry */
    n.acl[4 + 8 * 3 + 2] = 4;
    assert_false(proc_node_allows(&n, &bob2, why, sizeof(why)));
    struct proc_cred alice = {.uid = 1002, .gids = {1002}, .n = 1};
    assert_false(proc_node_allows(&n, &alice, why, sizeof(why)));
    assert_string_equal(why, "the ACL's other entry");
}

static void test_passwd_group(void **state)
{
    (void)state;
    const char *passwd = "root:x:0:0::/root:/bin/sh\nollama:x:998:997::/srv:/bin/false\n";
    const char *group = "render:x:992:alice,ollama\nollama:x:997:\nvideo:x:44:alice\n";
    long uid = -1, gid = -1;
    assert_int_equal(proc_passwd_find(passwd, "ollama", &uid, &gid), 0);
    assert_int_equal(uid, 998);
    assert_int_equal(gid, 997);
    assert_int_equal(proc_passwd_find(passwd, "olla", &uid, &gid), -1);
    assert_int_equal(proc_group_gid(group, "video"), 44);
    assert_int_equal(proc_group_gid(group, "123"), 123);
    assert_int_equal(proc_group_gid(group, "nosuch"), -1);
    struct proc_cred c = {.uid = uid, .n = 0};
    proc_cred_add(&c, gid);
    proc_group_members(group, "ollama", &c);
    assert_int_equal(c.n, 2);
    assert_int_equal(c.gids[1], 992);
    char *names = proc_cred_names(group, &c);
    assert_string_equal(names, "ollama, render");
    free(names);
}

static void test_libraries(void **state)
{
    (void)state;
    assert_true(proc_gpu_lib("libcudnn.so.9"));
    assert_true(proc_gpu_lib("libcuda.so.550.90.07"));
    assert_true(proc_gpu_lib("libamdhip64.so.6.2.60200"));
    assert_false(proc_gpu_lib("libc.so.6"));
    assert_false(proc_gpu_lib("libcurl.so.4"));
    assert_string_equal(proc_lib_version("libcuda.so.550.90.07"), "550.90.07");
    assert_string_equal(proc_lib_version("libcudnn.so.9"), "9");
    assert_null(proc_lib_version("libOpenCL.so"));
    assert_true(proc_gpu_var("CUDA_VISIBLE_DEVICES"));
    assert_true(proc_gpu_var("VK_ICD_FILENAMES"));
    assert_false(proc_gpu_var("HOME"));
}

/* The typed facts, read from a section as the probe builds it and leniently from one of odd shapes. */
static void test_result(void **state)
{
    (void)state;
    static const char *doc =
        "{\"unit\":{\"name\":\"ollama.service\",\"file\":\"/usr/lib/systemd/system/ollama.service\",\"masked\":false,"
        "\"source\":\"files\",\"user\":\"ollama\",\"private_devices\":true,\"main_pid\":4242,"
        "\"access\":{\"nodes\":[{\"path\":\"/dev/kfd\",\"can_open\":false},{\"path\":\"/dev/dri/renderD128\","
        "\"can_open\":true}],\"acls_checked\":true}},"
        "\"user\":{\"name\":\"bob\",\"source\":\"nss\",\"uid\":1001,\"nodes\":[{\"can_open\":false}]},"
        "\"pid\":{\"pid\":4242,\"name\":\"ollama\",\"uid\":998,\"other_mount_namespace\":true,"
        "\"libraries\":[{\"path\":\"/usr/lib/libamdhip64.so.6\"},7],\"open_nodes\":[\"/dev/kfd\"],"
        "\"not_readable\":[],\"cgroup\":{\"v1\":{\"path\":\"/\",\"nodes\":[{\"can_open\":false},{\"can_open\":false}]},"
        "\"v2\":{\"device_programs\":1}}}}";
    json_object *data = json_tokener_parse(doc);
    assert_non_null(data);
    struct result_process *r = result_process_read(data);
    assert_non_null(r);
    assert_string_equal(r->unit->name, "ollama.service");
    assert_true(r->unit->found);
    assert_false(r->unit->from_manager);
    assert_int_equal(r->unit->private_devices, GC_TRI_YES);
    assert_string_equal(r->unit->user, "ollama");
    assert_int_equal(r->unit->main_pid, 4242);
    assert_int_equal(r->unit->nodes, 2);
    assert_int_equal(r->unit->denied, 1);
    assert_true(r->user->from_nss);
    assert_int_equal(r->user->uid, 1001);
    assert_int_equal(r->user->denied, 1);
    assert_int_equal(r->pid->uid, 998);
    assert_int_equal(r->pid->other_mount_namespace, GC_TRI_YES);
    assert_int_equal(r->pid->n_libraries, 1); /* the entry that is no object is left out */
    assert_string_equal(r->pid->libraries[0], "/usr/lib/libamdhip64.so.6");
    assert_int_equal(r->pid->n_open_nodes, 1);
    assert_int_equal(r->pid->not_readable, 0);
    assert_int_equal(r->pid->nodes, -1); /* no access object */
    assert_int_equal(r->pid->cgroup_denied, 2);
    assert_int_equal(r->pid->device_programs, 1);
    json_object *again = json_tokener_parse(doc); /* DATA is left as it was */
    assert_string_equal(json_object_to_json_string_ext(data, JSON_C_TO_STRING_PLAIN),
                        json_object_to_json_string_ext(again, JSON_C_TO_STRING_PLAIN));
    json_object_put(again);
    result_process_ops.free(r);
    json_object_put(data);
    /* odd shapes: nothing of them is typed, nothing fails */
    data = json_tokener_parse("{\"unit\":3,\"user\":{\"uid\":null},\"pid\":{\"cgroup\":{\"v2\":{\"device_programs\":null}}}}");
    r = result_process_read(data);
    assert_non_null(r);
    assert_null(r->unit);
    assert_int_equal(r->user->uid, -1);
    assert_false(r->user->from_nss);
    assert_int_equal(r->pid->cgroup_denied, -1);
    assert_int_equal(r->pid->device_programs, -1);
    assert_int_equal(r->pid->not_readable, -1);
    result_process_ops.free(r);
    json_object_put(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syntax),
        cmocka_unit_test(test_access),
        cmocka_unit_test(test_passwd_group),
        cmocka_unit_test(test_libraries),
        cmocka_unit_test(test_result),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
