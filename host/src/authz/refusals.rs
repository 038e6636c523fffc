//! Decisions of the protocol endpoints (delegation, admission of metadata-document clients): the
//! policies about one action, evaluated alone, whose refusals each stand for an error code the
//! client is told. The code and a precedence come from the annotations of the policy that
//! refused; when several refuse, the one with the lowest precedence answers.

use std::collections::HashMap;
use std::str::FromStr;

use cedar_policy::{
    Context, Decision, Entities, Entity, EntityUid, PolicyId, PolicySet, Request, RestrictedExpression,
};

use super::{Authorizer, EvaluationError, NAMESPACE, PolicyError};

/// The error codes one action's refusals may carry.
pub trait Code: Copy + 'static {
    /// The action the policies decide.
    const ACTION: &'static str;
    /// The code answered when no policy permits.
    const UNPERMITTED: Self;
    /// Every code, as the `@errorCode` annotations name them.
    fn all() -> &'static [Self];
    fn code(self) -> &'static str;
}

/// Allowed, or refused by the policy with the lowest precedence among those that refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ruling<C> {
    Allow,
    /// `policy` is none when no policy permitted at all.
    Deny {
        refusal: C,
        precedence: u32,
        policy: Option<String>,
    },
}

/// The policies about one action, and what each of them that refuses stands for.
pub(super) struct Refusing<C> {
    pub(super) action: EntityUid,
    pub(super) policies: PolicySet,
    refusals: HashMap<PolicyId, (C, u32)>,
}

impl<C: Code> Refusing<C> {
    /// Picks the policies about `C::ACTION` out of `all` and reads the code and precedence of each
    /// that refuses, once, at load. Refuses a set in which one lacks either, or names an unknown
    /// code, and a schema that does not declare the action.
    pub(super) fn of(schema: &cedar_policy::Schema, all: &PolicySet) -> Result<Self, PolicyError> {
        let invalid = |message: String| PolicyError::Invalid(format!("  {message}"));
        let action_name = C::ACTION;
        if !schema.actions().any(|action| action.id().unescaped() == action_name) {
            return Err(invalid(format!("the schema does not declare the action `{action_name}`")));
        }
        let action = EntityUid::from_str(&format!("{NAMESPACE}::Action::\"{action_name}\""))
            .map_err(|e| invalid(e.to_string()))?;
        let mut policies = PolicySet::new();
        let mut refusals = HashMap::new();
        let about = format!("Action::\"{action_name}\"");
        for policy in all.policies().filter(|p| p.to_string().contains(&about)) {
            policies.add(policy.clone()).map_err(|e| invalid(e.to_string()))?;
            if policy.effect() != cedar_policy::Effect::Forbid {
                continue;
            }
            let id = policy.id();
            let code = policy.annotation("errorCode").ok_or_else(|| invalid(format!("{id}: no @errorCode")))?;
            let refusal = C::all().iter().copied().find(|known| known.code() == code).ok_or_else(|| {
                invalid(format!("{id}: @errorCode(\"{code}\") is not an error code of `{action_name}`"))
            })?;
            let precedence = policy
                .annotation("precedence")
                .and_then(|p| p.parse::<u32>().ok())
                .ok_or_else(|| invalid(format!("{id}: @precedence must be a whole number")))?;
            refusals.insert(id.clone(), (refusal, precedence));
        }
        Ok(Self { action, policies, refusals })
    }

    /// What these policies rule on `principal` doing the action on `resource` in `context`.
    pub(super) fn decide(
        &self,
        authorizer: &Authorizer,
        (principal, resource): (EntityUid, EntityUid),
        context: Vec<(String, RestrictedExpression)>,
        entities: Vec<Entity>,
    ) -> Result<Ruling<C>, EvaluationError> {
        let context = Context::from_pairs(context).map_err(evaluation)?;
        let request = Request::new(principal, self.action.clone(), resource, context, Some(&authorizer.schema))
            .map_err(evaluation)?;
        let entities = Entities::from_entities(entities, None).map_err(evaluation)?;
        self.ruling(&authorizer.cedar.is_authorized(&request, &self.policies, &entities))
    }

    fn ruling(&self, response: &cedar_policy::Response) -> Result<Ruling<C>, EvaluationError> {
        if let Some(error) = response.diagnostics().errors().next() {
            return Err(EvaluationError(error.to_string()));
        }
        if response.decision() == Decision::Allow {
            return Ok(Ruling::Allow);
        }
        let mut ruling = Ruling::Deny { refusal: C::UNPERMITTED, precedence: 0, policy: None };
        let mut lowest = u32::MAX;
        for id in response.diagnostics().reason() {
            if let Some(&(refusal, precedence)) = self.refusals.get(id)
                && precedence < lowest
            {
                lowest = precedence;
                ruling = Ruling::Deny { refusal, precedence, policy: Some(id.to_string()) };
            }
        }
        Ok(ruling)
    }
}

/// A set of strings, as the policies read it.
pub(super) fn strings(items: &[String]) -> RestrictedExpression {
    RestrictedExpression::new_set(items.iter().cloned().map(RestrictedExpression::new_string))
}

pub(super) fn evaluation(error: impl std::fmt::Display) -> EvaluationError {
    EvaluationError(error.to_string())
}

impl<C: Code> Ruling<C> {
    /// Whether the ruling is the one a fixture case expects (with its error code, when the case
    /// names one), and what it was, for the report.
    pub(super) fn judged(&self, expected: super::fixtures::Expected, error_code: Option<&str>) -> (bool, String) {
        use super::fixtures::Expected;
        match (self, expected) {
            (Self::Allow, Expected::Allow) => (true, "allowed".to_owned()),
            (Self::Deny { refusal, policy, .. }, Expected::Deny) => {
                let matches = error_code.is_none_or(|want| want == refusal.code());
                (matches, format!("denied with {} by {}", refusal.code(), policy.as_deref().unwrap_or("no permit")))
            }
            (Self::Allow, Expected::Deny) => (false, "allowed, expected DENY".to_owned()),
            (Self::Deny { refusal, .. }, Expected::Allow) => {
                (false, format!("denied with {}, expected ALLOW", refusal.code()))
            }
        }
    }
}
