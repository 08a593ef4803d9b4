//! Prompt-template packs: implement [`PromptTemplates`] and export it with
//! [`export_prompt_templates!`](crate::export_prompt_templates).

pub use crate::bindings::prompt_template_world::exports::pith::plugin0_1_0::prompt_template::TemplateInfo;

/// A pack of prompt templates.
pub trait PromptTemplates {
    /// The templates, as `get_commands` lists them.
    fn templates() -> Vec<TemplateInfo>;
    /// Expands one template with its arguments.
    fn expand(name: &str, args: &[String]) -> Result<String, String>;
}

/// Exports `T: PromptTemplates` as this component's `prompt-template` interface.
#[macro_export]
macro_rules! export_prompt_templates {
    ($pack:ty) => {
        #[doc(hidden)]
        pub struct __PithPromptTemplates;

        impl $crate::bindings::prompt_template_world::exports::pith::plugin0_1_0::prompt_template::Guest
            for __PithPromptTemplates
        {
            fn templates() -> ::std::vec::Vec<$crate::prompt_template::TemplateInfo> {
                <$pack as $crate::prompt_template::PromptTemplates>::templates()
            }

            fn expand(
                name: ::std::string::String,
                args: ::std::vec::Vec<::std::string::String>,
            ) -> ::std::result::Result<::std::string::String, ::std::string::String> {
                <$pack as $crate::prompt_template::PromptTemplates>::expand(&name, &args)
            }
        }

        $crate::bindings::prompt_template_world::__export_prompt_template_world!(
            __PithPromptTemplates
        );
    };
}
