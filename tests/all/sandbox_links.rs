//! Links judged by where they lead, the same for reads and writes (pi reads and writes
//! through links; the sandbox then judges the target): a workspace link to a readable file
//! outside is read, one into a writable root is written there (a dangling one creates its
//! target), one to a path the mode does not let the tools write is refused with the
//! sandbox's reason naming the target and the link, and one into the deny list is refused.

use crate::tools::Workspace;
use serde_json::json;
use std::os::unix::fs::symlink;

#[tokio::test(flavor = "multi_thread")]
async fn links_are_judged_by_their_target_for_reads_and_writes() {
    let outside = tempfile::tempdir().unwrap();
    let out = outside.path().canonicalize().unwrap();
    let (readable, writable, keys) = (out.join("readable"), out.join("writable"), out.join("keys"));
    for dir in [&readable, &writable, &keys] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(readable.join("notes.txt"), "notes\n").unwrap();
    std::fs::write(writable.join("draft.txt"), "draft\n").unwrap();
    std::fs::write(keys.join("id"), "secret").unwrap();
    let ws =
        Workspace::with_sandbox(json!({"writableRoots": [writable], "denyRead": [keys]})).await;
    let at = |name: &str| ws.dir.path().join(name);
    symlink(readable.join("notes.txt"), at("notes")).unwrap();
    symlink(&readable, at("docs")).unwrap();
    symlink(writable.join("draft.txt"), at("draft")).unwrap();
    symlink(&writable, at("out")).unwrap();
    symlink(writable.join("later.txt"), at("later")).unwrap();
    symlink(keys.join("id"), at("key")).unwrap();

    // Reads follow links out of the workspace, as reads by the absolute path do.
    let read = ws.call("read", json!({"path": "notes"})).await;
    assert_eq!((read.text(), read.is_error), ("notes\n".to_string(), false));
    let listed = ws.call("ls", json!({"path": "docs"})).await;
    assert_eq!(
        (listed.text(), listed.is_error),
        ("notes.txt".to_string(), false)
    );

    // Writes go where the link leads when the mode lets the tools write there.
    let edited = ws
        .call(
            "edit",
            json!({"path": "draft", "edits": [{"oldText": "draft", "newText": "final"}]}),
        )
        .await;
    assert!(!edited.is_error, "{}", edited.text());
    assert_eq!(
        std::fs::read_to_string(writable.join("draft.txt")).unwrap(),
        "final\n"
    );
    let made = ws
        .call("write", json!({"path": "out/new.txt", "content": "new"}))
        .await;
    assert!(!made.is_error, "{}", made.text());
    assert_eq!(
        std::fs::read_to_string(writable.join("new.txt")).unwrap(),
        "new"
    );
    let created = ws
        .call("write", json!({"path": "later", "content": "made"}))
        .await;
    assert!(!created.is_error, "{}", created.text());
    assert_eq!(
        std::fs::read_to_string(writable.join("later.txt")).unwrap(),
        "made"
    );
    assert!(at("later").is_symlink(), "the link stays a link");

    // A write through a link to where the tools may not write names the target and the link.
    let refused = ws
        .call("write", json!({"path": "notes", "content": "x"}))
        .await;
    assert!(refused.is_error);
    assert_eq!(
        refused.text(),
        format!(
            "write to {} denied: outside the workspace in sandbox mode workspace-write (add it to sandbox.writableRoots or run with --sandbox full-access) ({} is a link to it)",
            readable.join("notes.txt").display(),
            ws.root().join("notes").display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(readable.join("notes.txt")).unwrap(),
        "notes\n"
    );

    // A link into the deny list is refused as such, for reads and writes.
    let read = ws.call("read", json!({"path": "key"})).await;
    assert!(read.is_error);
    assert!(
        read.text()
            .contains("leads to a path on the sandbox's deny list"),
        "{}",
        read.text()
    );
    let write = ws
        .call("write", json!({"path": "key", "content": "x"}))
        .await;
    assert!(write.is_error);
    assert!(
        write
            .text()
            .contains("the sandbox never lets the model's tools and commands write there")
            && write.text().ends_with("key is a link to it)"),
        "{}",
        write.text()
    );
    assert_eq!(std::fs::read_to_string(keys.join("id")).unwrap(), "secret");
}
