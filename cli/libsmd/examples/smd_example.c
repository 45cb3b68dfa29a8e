/*
 * smd_example: follows a job's node events with libsmd, the way a job's rank 0 would.
 *
 *   cc -I include examples/smd_example.c -L <dir of libsmd.so> -lsmd -o smd_example
 *   SLURM_CONF=/etc/slurm/slurm.conf ./smd_example JOBID [COUNT]
 *
 * Prints the job's allocation, then COUNT events (default: until the job ends), and replaces
 * every node reported failed by a spare. Exits 0 on success, 1 with the library's message.
 */
#include <stdio.h>
#include <stdlib.h>

#include "smd.h"

static int fail(const char *what, int rc) {
    fprintf(stderr, "smd_example: %s: %s (%s)\n", what, smd_strerror(rc), smd_last_error());
    return 1;
}

static void print_allocation(const smd_allocation_t *a) {
    printf("job %u nodes %s cpus %s time_limit %u\n", a->job_id, a->node_list, a->cpus_per_node,
           a->time_limit_minutes);
    for (size_t i = 0; i < a->node_count; i++) {
        printf("  node %s cpus %u %s\n", a->nodes[i].name, a->nodes[i].cpus,
               smd_node_state_name(a->nodes[i].state));
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: smd_example JOBID [COUNT]\n");
        return 2;
    }
    uint32_t job = (uint32_t)strtoul(argv[1], NULL, 10);
    long count = argc > 2 ? strtol(argv[2], NULL, 10) : -1;

    smd_handle_t *h = NULL;
    int rc = smd_open(NULL, &h);
    if (rc != SMD_OK) return fail("smd_open", rc);

    smd_allocation_t *a = NULL;
    rc = smd_job_nodes(h, job, &a);
    if (rc != SMD_OK) return fail("smd_job_nodes", rc);
    print_allocation(a);
    smd_free_allocation(a);

    smd_subscription_t *s = NULL;
    rc = smd_subscribe(h, job, &s);
    if (rc != SMD_OK) return fail("smd_subscribe", rc);
    for (long n = 0; count < 0 || n < count; n++) {
        smd_event_t *e = NULL;
        rc = smd_next_event(s, &e);
        if (rc == SMD_EENDED) break;
        if (rc != SMD_OK) return fail("smd_next_event", rc);
        printf("event %s node %s replacement %s time %lld nodes %s\n",
               smd_event_kind_name(e->kind), e->node, e->replacement, (long long)e->time,
               e->allocation->node_list);
        fflush(stdout);
        if (e->kind == SMD_EVENT_FAILED) {
            smd_allocation_t *after = NULL;
            rc = smd_replace_node(h, job, e->node, &after);
            if (rc == SMD_OK) {
                printf("replaced %s: ", e->node);
                print_allocation(after);
                smd_free_allocation(after);
            } else {
                printf("replace %s: %s: %s\n", e->node, smd_strerror(rc), smd_last_error());
            }
        }
        smd_free_event(e);
    }
    smd_unsubscribe(s);
    smd_close(h);
    return 0;
}
