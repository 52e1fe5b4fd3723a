//! Datatype queries for the predefined datatypes (derived datatypes come with the datatype engine).
use super::check;
use crate::abi::*;
use crate::error::err;
use crate::export;
use std::os::raw::c_int;

export! {
    fn MPI_Type_size / PMPI_Type_size (datatype: MPI_Datatype, size: *mut c_int) on MPI_COMM_SELF => {
        let s = check::datatype_size(datatype)?;
        if size.is_null() {
            return Err(err(MPI_ERR_ARG, "size is NULL"));
        }
        *size = s as c_int;
        Ok(())
    }

    fn MPI_Type_size_x / PMPI_Type_size_x (datatype: MPI_Datatype, size: *mut MPI_Count) on MPI_COMM_SELF => {
        let s = check::datatype_size(datatype)?;
        if size.is_null() {
            return Err(err(MPI_ERR_ARG, "size is NULL"));
        }
        *size = s as MPI_Count;
        Ok(())
    }
}
