"""The tests/mpi/errors.c cases that end a job, with the message each must
print: one table for the Linux-host run (test_mpi_host.py) and the Tern-node
run (test_mpi_tern.py), so both hold the library to the same words."""

# (case, ranks, message on stderr)
FATAL = [
    ("rank", 3, "MPI error on rank 0 in MPI_Send: MPI_ERR_RANK (code 6): rank 6 is not in 0..2"),
    ("truncate", 2, "MPI error on rank 1 in MPI_Recv: MPI_ERR_TRUNCATE (code 15)"),
    ("noinit", 2, "in MPI_Send: MPI_ERR_OTHER (code 16): called before MPI_Init"),
    ("gatherv", 4, "MPI error on rank 0 in MPI_Gatherv: MPI_ERR_OTHER (code 16): rank 1's "
                   "block is 8 bytes where the root's counts and type make it 12"),
    ("added", 2, "MPI error on rank 1 in MPI_Comm_call_errhandler: the solver diverged "
                 "(code 50): raised by the program"),  # MPI_ERR_LASTCODE + 2
    ("pset", 2, "MPI error on rank 0 in MPI_Group_from_session_pset: MPI_ERR_ARG (code 13): "
                "\"mpi://nodes\" is no process set (there are mpi://WORLD and mpi://SELF)"),
    ("scatterv", 4, "MPI error on rank 2 in MPI_Scatterv: MPI_ERR_OTHER (code 16): the root "
                    "sends 12 bytes where this rank's count and type make 20"),
]

# errors.c requests under TERN_MPI_REQUESTS=100
REQUESTS_ENV = {"TERN_MPI_REQUESTS": "100"}
REQUESTS_MESSAGE = ("in MPI_Irecv: MPI_ERR_INTERN (code 17): all 100 requests are in use "
                    "(TERN_MPI_REQUESTS")
