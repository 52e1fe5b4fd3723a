! oxmpi-test: ranks=1,2,3,4 timeout=60
! Collectives from fixed-form source with mpif.h: Allreduce and Reduce with MPI_IN_PLACE,
! Bcast and Gather, and MPI_BOTTOM with a struct type built from absolute addresses.
      PROGRAM COLLFX
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NP, I, ISUM(3), ALL(64), TSTRUCT
      INTEGER BLENS(2), TYPES(2)
      INTEGER(KIND=MPI_ADDRESS_KIND) DISPS(2)
      INTEGER IVAL
      DOUBLE PRECISION DVAL, DMAX
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)
! Allreduce in place.
      DO I = 1, 3
         ISUM(I) = RANK + I
      END DO
      CALL MPI_ALLREDUCE(MPI_IN_PLACE, ISUM, 3, MPI_INTEGER, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      DO I = 1, 3
         IF (ISUM(I) .NE. NP*(NP-1)/2 + NP*I) CALL FAIL('ALLREDUCE')
      END DO
! Reduce in place at the root (MAX of doubles).
      DMAX = DBLE(RANK) * 1.5D0
      IF (RANK .EQ. 0) THEN
         CALL MPI_REDUCE(MPI_IN_PLACE, DMAX, 1, MPI_DOUBLE_PRECISION,
     &                   MPI_MAX, 0, MPI_COMM_WORLD, IERR)
         IF (DMAX .NE. DBLE(NP-1) * 1.5D0) CALL FAIL('REDUCE')
      ELSE
         CALL MPI_REDUCE(DMAX, DMAX, 1, MPI_DOUBLE_PRECISION,
     &                   MPI_MAX, 0, MPI_COMM_WORLD, IERR)
      END IF
! Gather.
      CALL MPI_GATHER(RANK, 1, MPI_INTEGER, ALL, 1, MPI_INTEGER, 0,
     &                MPI_COMM_WORLD, IERR)
      IF (RANK .EQ. 0) THEN
         DO I = 1, NP
            IF (ALL(I) .NE. I - 1) CALL FAIL('GATHER')
         END DO
      END IF
! Bcast of two variables through MPI_BOTTOM and absolute addresses.
      IVAL = -1
      DVAL = -1.0D0
      IF (RANK .EQ. 0) THEN
         IVAL = 42
         DVAL = 2.5D0
      END IF
      CALL MPI_GET_ADDRESS(IVAL, DISPS(1), IERR)
      CALL MPI_GET_ADDRESS(DVAL, DISPS(2), IERR)
      BLENS(1) = 1
      BLENS(2) = 1
      TYPES(1) = MPI_INTEGER
      TYPES(2) = MPI_DOUBLE_PRECISION
      CALL MPI_TYPE_CREATE_STRUCT(2, BLENS, DISPS, TYPES, TSTRUCT,
     &                            IERR)
      CALL MPI_TYPE_COMMIT(TSTRUCT, IERR)
      CALL MPI_BCAST(MPI_BOTTOM, 1, TSTRUCT, 0, MPI_COMM_WORLD, IERR)
      IF (IERR .NE. MPI_SUCCESS) CALL FAIL('BCAST IERR')
      IF (IVAL .NE. 42 .OR. DVAL .NE. 2.5D0) CALL FAIL('BOTTOM BCAST')
      CALL MPI_TYPE_FREE(TSTRUCT, IERR)
      CALL MPI_FINALIZE(IERR)
      IF (RANK .EQ. 0) PRINT *, 'coll_fixed: ok'
      END

      SUBROUTINE FAIL(WHAT)
      CHARACTER*(*) WHAT
      INCLUDE 'mpif.h'
      INTEGER IERR
      PRINT *, 'FAIL: ', WHAT
      FLUSH(6)
      CALL MPI_ABORT(MPI_COMM_WORLD, 1, IERR)
      END
