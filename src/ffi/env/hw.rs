//! MPI_Get_hw_resource_info (MPI 4.1 section 11.4.2) and MPICH's GPU support queries
//! (MPIX_GPU_query_support, MPIX_Query_{cuda,ze,hip}_support): oxmpi moves host memory only, so
//! every GPU query answers "no".
use crate::abi::*;
use crate::error::err;
use crate::export;
use crate::ffi::pointer_args::out;
use std::os::raw::c_int;

/// MPIX_GPU_SUPPORT_CUDA, _ZE and _HIP of include/mpi.h (MPICH's values).
const GPU_TYPES: [c_int; 3] = [0, 1, 2];

export! {
    fn MPI_Get_hw_resource_info / PMPI_Get_hw_resource_info (hw_info: *mut MPI_Info) on comm MPI_COMM_SELF => {
        let o = out(hw_info, "hw_info")?;
        crate::ffi::check::universe()?;
        let mut info = crate::info::Info::new();
        for (kind, n) in crate::runtime::hw::resource_types() {
            info.set(kind.as_bytes(), n.to_string().as_bytes());
        }
        let h = crate::ffi::info::new_handle(info)?;
        // SAFETY: checked non-NULL above; the caller passes an MPI_Info for the new handle.
        unsafe { *o = h };
        Ok(())
    }

    fn MPIX_GPU_query_support / PMPIX_GPU_query_support (gpu_type: c_int, is_supported: *mut c_int) on comm MPI_COMM_SELF => {
        let o = out(is_supported, "is_supported")?;
        if !GPU_TYPES.contains(&gpu_type) {
            return Err(err(MPI_ERR_ARG, format!("invalid gpu_type {gpu_type} (MPIX_GPU_SUPPORT_CUDA, _ZE or _HIP)")));
        }
        // SAFETY: checked non-NULL above; the caller passes an int.
        unsafe { *o = 0 };
        Ok(())
    }

    // These three return a flag, not an error code: 0 ("not supported") is what `export!`
    // returns for Ok (MPI_SUCCESS is 0).
    fn MPIX_Query_cuda_support / PMPIX_Query_cuda_support () on comm MPI_COMM_SELF => {
        Ok(())
    }

    fn MPIX_Query_ze_support / PMPIX_Query_ze_support () on comm MPI_COMM_SELF => {
        Ok(())
    }

    fn MPIX_Query_hip_support / PMPIX_Query_hip_support () on comm MPI_COMM_SELF => {
        Ok(())
    }
}

const _: () = assert!(MPI_SUCCESS == 0);
