//! MPI_Comm_spawn and MPI_Comm_spawn_multiple of Open MPI 4.1's ABI, by hand: the generator
//! cannot size `array_of_info` (count handles) and `array_of_errcodes` (one code per process asked
//! for: maxprocs, or the sum of array_of_maxprocs), whose codes are converted back. The
//! MPI-5 standard ABI has the same pair (`abi5::spawn`).
use super::conv::*;
use crate::ffi::boundary::run_value;
use std::os::raw::{c_char, c_int};
crate::abi5::spawn::spawn_pair!(oxompi_MPI_Comm_spawn, oxompi_MPI_Comm_spawn_multiple);
