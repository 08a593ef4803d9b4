//! Skill packs: implement [`SkillPack`] and export it with [`export_skills!`](crate::export_skills).

pub use crate::bindings::skill_world::exports::pith::plugin0_1_0::skill::SkillInfo;

/// A pack of skills.
pub trait SkillPack {
    /// The skills, as listed to the model.
    fn skills() -> Vec<SkillInfo>;
    /// The instructions of one skill.
    fn load(name: &str) -> Result<String, String>;
}

/// Exports `T: SkillPack` as this component's `skill` interface.
#[macro_export]
macro_rules! export_skills {
    ($pack:ty) => {
        #[doc(hidden)]
        pub struct __PithSkills;

        impl $crate::bindings::skill_world::exports::pith::plugin0_1_0::skill::Guest
            for __PithSkills
        {
            fn skills() -> ::std::vec::Vec<$crate::skill::SkillInfo> {
                <$pack as $crate::skill::SkillPack>::skills()
            }

            fn load(
                name: ::std::string::String,
            ) -> ::std::result::Result<::std::string::String, ::std::string::String> {
                <$pack as $crate::skill::SkillPack>::load(&name)
            }
        }

        $crate::bindings::skill_world::__export_skill_world!(__PithSkills);
    };
}
