//! `wasi:filesystem/types` with the sandbox's path rules checked at every call.
//!
//! A plugin's preopens are whole directory trees (`/` read-only, the writable roots
//! read-write), and wasmtime-wasi keeps every access beneath them. On top of that, each call
//! that names a path (open, stat, create, remove, rename, link, readlink, set-times) is judged
//! by [`PathRules`] on the path it names and on where its links lead, before it runs; an open
//! is judged again on the path the new descriptor really has, and a directory listing leaves
//! the hidden names out. The rules apply when the path is used, so a file made after start is
//! judged like any other and a directory holding a denied path stays whole. A refusal is
//! `not-permitted` (EPERM): the tools then say it is the sandbox, with the path and the fix.
//!
//! Every other method delegates to wasmtime-wasi's own implementation unchanged.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use wasmtime::component::{HasData, Linker, Resource};
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemCtxView, WasiFilesystemView};
use wasmtime_wasi::p2::bindings::filesystem::preopens;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self, DirectoryEntryStream, ErrorCode, HostDescriptor, HostDirectoryEntryStream,
};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, FsError, FsResult};

pub use super::path_guard::PathGuard;
use super::sandbox::StoreState;
use crate::sandbox::paths::{file_path, normalize, real_path};

/// The filesystem view of a call with its guard.
pub struct GuardedFs<'a> {
    inner: WasiFilesystemCtxView<'a>,
    guard: Arc<PathGuard>,
}

/// The [`HasData`] of [`GuardedFs`].
pub struct Guarded;

impl HasData for Guarded {
    type Data<'a> = GuardedFs<'a>;
}

fn guarded(state: &mut StoreState) -> GuardedFs<'_> {
    let guard = state.path_guard.clone();
    GuardedFs {
        inner: state.filesystem(),
        guard,
    }
}

/// Puts the guarded `wasi:filesystem/types` in place of wasmtime-wasi's (added before).
pub fn add_to_linker(linker: &mut Linker<StoreState>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let added = types::add_to_linker::<StoreState, Guarded>(linker, guarded);
    linker.allow_shadowing(false);
    added
}

/// The sandbox's refusal: `not-permitted` (EPERM), which the tools' errors tell apart from the
/// system's own `access` (EACCES).
fn refused() -> FsError {
    ErrorCode::NotPermitted.into()
}

/// The real path of a descriptor (a file's or a directory's).
fn path_of(descriptor: &Descriptor) -> Option<PathBuf> {
    match descriptor {
        Descriptor::Dir(dir) => file_path(&dir.dir),
        Descriptor::File(file) => file_path(&file.file),
    }
}

/// A borrow of `fd` to pass on while `fd` itself is kept.
fn again<T: 'static>(fd: &Resource<T>) -> Resource<T> {
    Resource::new_borrow(fd.rep())
}

/// Where a call that names a path really goes: the guest's own descriptor and path, or a
/// preopened directory and the path under it (see [`GuardedFs::route`]).
struct Route {
    rep: u32,
    path: String,
    temporary: bool,
}

impl Route {
    fn fd(&self) -> Resource<Descriptor> {
        Resource::new_borrow(self.rep)
    }
}

impl GuardedFs<'_> {
    /// Refuses `path` under the directory `fd` unless the rules allow it, and says where the
    /// call goes. wasmtime-wasi refuses a link that leaves the descriptor's tree (an absolute
    /// one always), although the rules judged where it leads: such a call goes to the
    /// preopened directory holding the link's target, by the target's real path.
    fn route(
        &mut self,
        fd: &Resource<Descriptor>,
        path: &str,
        follow: bool,
        write: bool,
    ) -> FsResult<Route> {
        let direct = Route {
            rep: fd.rep(),
            path: path.to_string(),
            temporary: false,
        };
        let Some(rules) = self.guard.rules() else {
            return Ok(direct);
        };
        let dir = path_of(self.inner.table.get(fd)?).ok_or_else(refused)?;
        let named = normalize(&dir.join(path));
        if !rules.allows(&named, follow, write) {
            return Err(refused());
        }
        let real = real_path(&named, follow);
        if real == named {
            return Ok(direct);
        }
        let preopens = preopens::Host::get_directories(&mut self.inner).map_err(FsError::trap)?;
        let mut best: Option<(Resource<Descriptor>, PathBuf)> = None;
        for (preopen, _) in preopens {
            let root = path_of(self.inner.table.get(&preopen)?);
            let deeper = |root: &Path| {
                best.as_ref()
                    .is_none_or(|(_, b)| root.components().count() > b.components().count())
            };
            match root {
                Some(root) if real.starts_with(&root) && deeper(&root) => {
                    if let Some((previous, _)) = best.replace((preopen, root)) {
                        HostDescriptor::drop(&mut self.inner, previous).map_err(FsError::trap)?;
                    }
                }
                _ => HostDescriptor::drop(&mut self.inner, preopen).map_err(FsError::trap)?,
            }
        }
        let Some((preopen, root)) = best else {
            return Err(refused());
        };
        let rest = real.strip_prefix(&root).unwrap_or(Path::new(""));
        let path = if rest.as_os_str().is_empty() {
            ".".to_string()
        } else {
            rest.to_string_lossy().into_owned()
        };
        Ok(Route {
            rep: preopen.rep(),
            path,
            temporary: true,
        })
    }

    /// The routes of a call that names two paths and writes both (rename, link): `from`
    /// followed as its flag says, `to` never.
    fn route_both(
        &mut self,
        from: (&Resource<Descriptor>, &str, bool),
        to: (&Resource<Descriptor>, &str),
    ) -> FsResult<(Route, Route)> {
        let first = self.route(from.0, from.1, from.2, true)?;
        match self.route(to.0, to.1, false, true) {
            Ok(second) => Ok((first, second)),
            Err(err) => {
                self.release(first)?;
                Err(err)
            }
        }
    }

    /// Lets go of the preopen handle a route took.
    fn release(&mut self, route: Route) -> FsResult<()> {
        if route.temporary {
            HostDescriptor::drop(&mut self.inner, Resource::new_own(route.rep))
                .map_err(FsError::trap)?;
        }
        Ok(())
    }
}

fn follows(flags: types::PathFlags) -> bool {
    flags.contains(types::PathFlags::SYMLINK_FOLLOW)
}

impl types::Host for GuardedFs<'_> {
    fn convert_error_code(&mut self, err: FsError) -> wasmtime::Result<ErrorCode> {
        types::Host::convert_error_code(&mut self.inner, err)
    }

    fn filesystem_error_code(
        &mut self,
        err: Resource<wasmtime::Error>,
    ) -> wasmtime::Result<Option<ErrorCode>> {
        self.inner.filesystem_error_code(err)
    }
}

impl HostDescriptor for GuardedFs<'_> {
    async fn advise(
        &mut self,
        fd: Resource<Descriptor>,
        offset: types::Filesize,
        len: types::Filesize,
        advice: types::Advice,
    ) -> FsResult<()> {
        self.inner.advise(fd, offset, len, advice).await
    }

    async fn sync_data(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        self.inner.sync_data(fd).await
    }

    async fn get_flags(&mut self, fd: Resource<Descriptor>) -> FsResult<types::DescriptorFlags> {
        self.inner.get_flags(fd).await
    }

    async fn get_type(&mut self, fd: Resource<Descriptor>) -> FsResult<types::DescriptorType> {
        self.inner.get_type(fd).await
    }

    async fn set_size(&mut self, fd: Resource<Descriptor>, size: types::Filesize) -> FsResult<()> {
        self.inner.set_size(fd, size).await
    }

    async fn set_times(
        &mut self,
        fd: Resource<Descriptor>,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        self.inner.set_times(fd, atim, mtim).await
    }

    async fn read(
        &mut self,
        fd: Resource<Descriptor>,
        len: types::Filesize,
        offset: types::Filesize,
    ) -> FsResult<(Vec<u8>, bool)> {
        self.inner.read(fd, len, offset).await
    }

    async fn write(
        &mut self,
        fd: Resource<Descriptor>,
        buf: Vec<u8>,
        offset: types::Filesize,
    ) -> FsResult<types::Filesize> {
        self.inner.write(fd, buf, offset).await
    }

    async fn read_directory(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<Resource<DirectoryEntryStream>> {
        let dir = match self.guard.rules() {
            Some(_) => Some(path_of(self.inner.table.get(&fd)?).ok_or_else(refused)?),
            None => None,
        };
        let stream = self.inner.read_directory(fd).await?;
        if let Some(dir) = dir {
            self.guard
                .listings
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(stream.rep(), dir);
        }
        Ok(stream)
    }

    async fn sync(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        self.inner.sync(fd).await
    }

    async fn create_directory_at(
        &mut self,
        fd: Resource<Descriptor>,
        path: String,
    ) -> FsResult<()> {
        let route = self.route(&fd, &path, false, true)?;
        let result = self
            .inner
            .create_directory_at(route.fd(), route.path.clone())
            .await;
        self.release(route)?;
        result
    }

    async fn stat(&mut self, fd: Resource<Descriptor>) -> FsResult<types::DescriptorStat> {
        self.inner.stat(fd).await
    }

    async fn stat_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::DescriptorStat> {
        let route = self.route(&fd, &path, follows(path_flags), false)?;
        let result = self
            .inner
            .stat_at(route.fd(), path_flags, route.path.clone())
            .await;
        self.release(route)?;
        result
    }

    async fn set_times_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        let route = self.route(&fd, &path, follows(path_flags), true)?;
        let result = self
            .inner
            .set_times_at(route.fd(), path_flags, route.path.clone(), atim, mtim)
            .await;
        self.release(route)?;
        result
    }

    async fn link_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path_flags: types::PathFlags,
        old_path: String,
        new_descriptor: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        let (from, to) = self.route_both(
            (&fd, &old_path, follows(old_path_flags)),
            (&new_descriptor, &new_path),
        )?;
        let result = self
            .inner
            .link_at(
                from.fd(),
                old_path_flags,
                from.path.clone(),
                to.fd(),
                to.path.clone(),
            )
            .await;
        self.release(from)?;
        self.release(to)?;
        result
    }

    async fn open_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        oflags: types::OpenFlags,
        flags: types::DescriptorFlags,
    ) -> FsResult<Resource<Descriptor>> {
        let writes = oflags.intersects(types::OpenFlags::CREATE | types::OpenFlags::TRUNCATE)
            || flags.intersects(
                types::DescriptorFlags::WRITE | types::DescriptorFlags::MUTATE_DIRECTORY,
            );
        let route = self.route(&fd, &path, follows(path_flags), writes)?;
        let opened = self
            .inner
            .open_at(route.fd(), path_flags, route.path.clone(), oflags, flags)
            .await;
        self.release(route)?;
        let opened = opened?;
        let Some(rules) = self.guard.rules() else {
            return Ok(opened);
        };
        // Judged again where it really is (a link swapped in between the check and the open).
        let real = path_of(self.inner.table.get(&opened)?);
        if real.is_some_and(|real| rules.allows(&real, false, writes)) {
            Ok(opened)
        } else {
            HostDescriptor::drop(&mut self.inner, opened).map_err(FsError::trap)?;
            Err(refused())
        }
    }

    fn drop(&mut self, fd: Resource<Descriptor>) -> wasmtime::Result<()> {
        HostDescriptor::drop(&mut self.inner, fd)
    }

    async fn readlink_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<String> {
        let route = self.route(&fd, &path, false, false)?;
        let result = self.inner.readlink_at(route.fd(), route.path.clone()).await;
        self.release(route)?;
        if result.is_ok() || self.guard.rules().is_none() {
            return result;
        }
        // wasmtime-wasi will not say where an absolute link leads; the rules allowed the name.
        let dir = path_of(self.inner.table.get(&fd)?).ok_or_else(refused)?;
        std::fs::read_link(dir.join(&path))
            .map(|target| target.to_string_lossy().into_owned())
            .map_err(|err| ErrorCode::from(&err).into())
    }

    async fn remove_directory_at(
        &mut self,
        fd: Resource<Descriptor>,
        path: String,
    ) -> FsResult<()> {
        let route = self.route(&fd, &path, false, true)?;
        let result = self
            .inner
            .remove_directory_at(route.fd(), route.path.clone())
            .await;
        self.release(route)?;
        result
    }

    async fn rename_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path: String,
        new_fd: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        let (from, to) = self.route_both((&fd, &old_path, false), (&new_fd, &new_path))?;
        let result = self
            .inner
            .rename_at(from.fd(), from.path.clone(), to.fd(), to.path.clone())
            .await;
        self.release(from)?;
        self.release(to)?;
        result
    }

    async fn symlink_at(
        &mut self,
        fd: Resource<Descriptor>,
        src_path: String,
        dest_path: String,
    ) -> FsResult<()> {
        let route = self.route(&fd, &dest_path, false, true)?;
        let result = self
            .inner
            .symlink_at(route.fd(), src_path, route.path.clone())
            .await;
        self.release(route)?;
        result
    }

    async fn unlink_file_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        let route = self.route(&fd, &path, false, true)?;
        let result = self
            .inner
            .unlink_file_at(route.fd(), route.path.clone())
            .await;
        self.release(route)?;
        result
    }

    fn read_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynInputStream>> {
        self.inner.read_via_stream(fd, offset)
    }

    fn write_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynOutputStream>> {
        self.inner.write_via_stream(fd, offset)
    }

    fn append_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<Resource<DynOutputStream>> {
        self.inner.append_via_stream(fd)
    }

    async fn is_same_object(
        &mut self,
        a: Resource<Descriptor>,
        b: Resource<Descriptor>,
    ) -> wasmtime::Result<bool> {
        self.inner.is_same_object(a, b).await
    }

    async fn metadata_hash(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<types::MetadataHashValue> {
        self.inner.metadata_hash(fd).await
    }

    async fn metadata_hash_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::MetadataHashValue> {
        let route = self.route(&fd, &path, follows(path_flags), false)?;
        let result = self
            .inner
            .metadata_hash_at(route.fd(), path_flags, route.path.clone())
            .await;
        self.release(route)?;
        result
    }
}

impl HostDirectoryEntryStream for GuardedFs<'_> {
    async fn read_directory_entry(
        &mut self,
        stream: Resource<DirectoryEntryStream>,
    ) -> FsResult<Option<types::DirectoryEntry>> {
        let dir = self
            .guard
            .listings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&stream.rep())
            .cloned();
        loop {
            let entry = self.inner.read_directory_entry(again(&stream)).await?;
            match (&entry, &dir, self.guard.rules()) {
                (Some(found), Some(dir), Some(rules)) if rules.hides(&dir.join(&found.name)) => {
                    continue;
                }
                _ => return Ok(entry),
            }
        }
    }

    fn drop(&mut self, stream: Resource<DirectoryEntryStream>) -> wasmtime::Result<()> {
        self.guard
            .listings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&stream.rep());
        HostDirectoryEntryStream::drop(&mut self.inner, stream)
    }
}
