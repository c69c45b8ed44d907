/* The process-manager calls (PMI-1 names) that Sandia's test_pmi_hello uses,
 * answered by the reference-test runtime (../../refshim.c), not by a
 * process manager: who is who comes from the environment, Barrier and the
 * key/value space go over Portals. */
#ifndef REFSHIM_PMI_H
#define REFSHIM_PMI_H

#define PMI_SUCCESS 0
#define PMI_FAIL (-1)
#define PMI_ERR_INVALID_ARG 3
#define PMI_ERR_INVALID_KEY 6
#define PMI_ERR_INVALID_LENGTH 8
#define PMI_ERR_NOMEM 2

int PMI_Init(int *spawned);
int PMI_Initialized(int *initialized);
int PMI_Finalize(void);
int PMI_Get_rank(int *rank);
int PMI_Get_size(int *size);
int PMI_Barrier(void);
int PMI_KVS_Get_my_name(char *kvsname, int length);
int PMI_KVS_Get_name_length_max(int *length);
int PMI_KVS_Get_key_length_max(int *length);
int PMI_KVS_Get_value_length_max(int *length);
int PMI_KVS_Put(const char *kvsname, const char *key, const char *value);
int PMI_KVS_Commit(const char *kvsname);
int PMI_KVS_Get(const char *kvsname, const char *key, char *value, int length);

#endif
