/*
 * smd.h - libsmd, the client library of Sluice's failure management (Slurm's smd API).
 *
 * Licensed under the Apache License, Version 2.0 (as the rest of Sluice): programs may link
 * libsmd.so or libsmd.a without taking on a copyleft licence. Both use libmunge
 * (AuthType=auth/munge, LGPL) as a shared library: a program linking libsmd.a adds -lmunge.
 *
 * Every call names a job; only its owner and administrators may use it. Functions return
 * SMD_OK (0) or one of the SMD_E* codes; smd_strerror() gives a code's fixed text and
 * smd_last_error() the calling thread's message of its last failed call (the controller's
 * words, e.g. "Failed to replace the node"). Whatever the library returns through an out
 * pointer is released by the matching smd_free_*() / smd_close() / smd_unsubscribe().
 *
 * A handle may be used by several threads at once; a subscription by one thread at a time (it
 * may outlive its handle until smd_unsubscribe). Calls block; none may be made from a signal
 * handler.
 *
 * This header is written by hand and is part of the stable ABI: values and layouts only grow.
 */
#ifndef SMD_H
#define SMD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes. */
#define SMD_OK 0
#define SMD_ECONFIG 1      /* slurm.conf or nonstop.conf unreadable or invalid */
#define SMD_ECREDENTIAL 2  /* nothing can sign the caller's requests */
#define SMD_ECONNECT 3     /* no controller address answered */
#define SMD_ETIMEOUT 4     /* no reply within MessageTimeout */
#define SMD_EPERM 5        /* not the job's owner nor an administrator (or may not drain) */
#define SMD_ENOTFOUND 6    /* no such job, or node not in the job's allocation */
#define SMD_EINVAL 7       /* a bad argument */
#define SMD_EREFUSED 8     /* cannot be met now: no spare free, no extension left, ... */
#define SMD_ENOTENABLED 9  /* the cluster runs without SlurmctldPlugin=slurmctld/nonstop */
#define SMD_EENDED 10      /* the event stream is over */
#define SMD_ESERVER 11     /* any other failure */
#define SMD_EBADINPUT 12   /* a NULL pointer or a string that is not UTF-8 */

/* How a node of an allocation stands. */
#define SMD_NODE_OK 0
#define SMD_NODE_FAILED 1   /* out of service: down or not responding */
#define SMD_NODE_FAILING 2  /* up but drained or set to fail: expected to fail */

/* Event kinds. */
#define SMD_EVENT_UNKNOWN 0
#define SMD_EVENT_FAILED 1
#define SMD_EVENT_FAILING 2
#define SMD_EVENT_REPLACED 3       /* node replaced by replacement */
#define SMD_EVENT_DROPPED 4        /* node left the allocation */
#define SMD_EVENT_RECOVERED 5      /* node back in service, still allocated */
#define SMD_EVENT_TIME_EXTENDED 6
#define SMD_EVENT_JOB_ENDED 7      /* the last event of a subscription */

/* Opaque: a connection to the controller's failure management service. */
typedef struct smd_handle smd_handle_t;
/* Opaque: one job's event stream. */
typedef struct smd_subscription smd_subscription_t;

typedef struct smd_node {
    char *name;
    uint32_t cpus;   /* the job's CPUs on the node */
    int32_t state;   /* SMD_NODE_* */
} smd_node_t;

typedef struct smd_allocation {
    uint32_t job_id;
    char *node_list;                   /* compressed host list: "dario,prometeo" */
    char *cpus_per_node;               /* SLURM_JOB_CPUS_PER_NODE form: "2(x2)" */
    uint32_t time_limit_minutes;       /* 0: unlimited */
    uint32_t extend_available_minutes; /* extension the job may still ask for */
    uint32_t spares_used;              /* replacements so far */
    uint32_t spares_free;              /* hot spares free in the job's partition */
    size_t node_count;
    smd_node_t *nodes;                 /* node_count entries, in node-list order */
} smd_allocation_t;

typedef struct smd_event {
    int32_t kind;                  /* SMD_EVENT_* */
    char *node;                    /* "" when none */
    char *replacement;             /* "" unless SMD_EVENT_REPLACED */
    int64_t time;                  /* unix seconds */
    smd_allocation_t *allocation;  /* after the change; owned by the event */
} smd_event_t;

/* Connects to the cluster of slurm_conf (NULL: $SLURM_CONF, else /etc/slurm/slurm.conf);
 * nonstop.conf beside it with a Port sends requests to ControlAddr:Port, then BackupAddr:Port. */
int smd_open(const char *slurm_conf, smd_handle_t **out);
void smd_close(smd_handle_t *h);

/* The job's allocation with its failed and failing nodes. */
int smd_job_nodes(smd_handle_t *h, uint32_t job_id, smd_allocation_t **out);
/* The operations; out may be NULL when the new allocation is not wanted. */
int smd_replace_node(smd_handle_t *h, uint32_t job_id, const char *node, smd_allocation_t **out);
int smd_drop_node(smd_handle_t *h, uint32_t job_id, const char *node, smd_allocation_t **out);
int smd_drain_node(smd_handle_t *h, uint32_t job_id, const char *node, const char *reason,
                   smd_allocation_t **out);
int smd_extend_time(smd_handle_t *h, uint32_t job_id, uint32_t minutes, smd_allocation_t **out);
void smd_free_allocation(smd_allocation_t *a);

/* Events: first the job's current failed and failing nodes, then each change until the job
 * ends. smd_next_event blocks; it returns SMD_EENDED once the stream is over. */
int smd_subscribe(smd_handle_t *h, uint32_t job_id, smd_subscription_t **out);
int smd_next_event(smd_subscription_t *s, smd_event_t **out);
void smd_free_event(smd_event_t *e);
void smd_unsubscribe(smd_subscription_t *s);

/* Texts. Static strings, except smd_last_error's (valid until the thread's next call). */
const char *smd_strerror(int code);
const char *smd_last_error(void);
const char *smd_node_state_name(int state);
const char *smd_event_kind_name(int kind);

#ifdef __cplusplus
}
#endif

#endif /* SMD_H */
