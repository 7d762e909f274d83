//! Runs the shared self-check scenarios (the same list KUnit runs).

use mrbond_policy::policy::selfcheck::{run_all, CASES};

#[test]
fn every_selfcheck_case_passes() {
    let mut failed = Vec::new();
    for (name, case) in CASES {
        if let Err(e) = case() {
            failed.push(format!("{name}: {e}"));
        }
    }
    assert!(failed.is_empty(), "failed cases: {failed:#?}");
}

#[test]
fn run_all_agrees() {
    let (passed, first) = run_all();
    assert_eq!(first, None);
    assert_eq!(passed, CASES.len());
}

#[test]
fn case_names_are_unique() {
    let mut names: Vec<&str> = CASES.iter().map(|(n, _)| *n).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), CASES.len());
}
