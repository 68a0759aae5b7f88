package stack

import (
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/movietrace/tracinglocks/web/authconfig"
)

// DisplayNameClaim is the claim the API shows to other users (the
// standard attribute "name"): users may read it but never write it
// themselves (the client's WriteAttributes), so nobody can rename
// themselves into someone else; administrators set it (make user).
const DisplayNameClaim = "name"

// OAuthScopes the page asks for: profile for the name claim.
var OAuthScopes = authconfig.Scopes

// issuer is the URL of the tokens' issuer (their iss claim) the API's JWT
// authorizer trusts, the page's OIDC authority (auth-config.json) and,
// through issuerOrigin, a connect-src of the CSP: the page fetches its
// discovery document there. For the stack's user pool it is
// https://cognito-idp.<region>.amazonaws.com/<pool ID> (Cognito's issuer),
// written once here so the three cannot disagree.
func (s *Stack) issuer() *string {
	if s.cfg.JWT != nil {
		return jsii.String(s.cfg.JWT.Issuer)
	}
	return jsii.String(*s.issuerOrigin() + "/" + *s.UserPool.UserPoolId())
}

// issuerOrigin is the scheme and host of issuer.
func (s *Stack) issuerOrigin() *string {
	if s.cfg.JWT != nil {
		return jsii.String(origin(s.cfg.JWT.Issuer))
	}
	return jsii.String("https://cognito-idp." + *awscdk.Aws_REGION() + ".amazonaws.com")
}

// origin is an https URL's scheme and host (the URL up to its path).
func origin(url string) string {
	if i := strings.Index(url[len("https://"):], "/"); i >= 0 {
		return url[:len("https://")+i]
	}
	return url
}

// userPool creates the default identity provider: a Cognito user pool with
// administrator-created users, its managed login domain, and a public
// browser client (authorization code flow only, PKCE from the page, no
// secret) whose ID is the JWT audience. The client's callback and logout
// URLs are the distribution's, set by addWeb.
func (s *Stack) userPool(cfg Config, removal awscdk.RemovalPolicy) (awscognito.UserPool, awscognito.UserPoolClient) {
	mfa := map[string]awscognito.Mfa{"off": awscognito.Mfa_OFF, "optional": awscognito.Mfa_OPTIONAL, "required": awscognito.Mfa_REQUIRED}[cfg.SignIn.MFA]
	props := &awscognito.UserPoolProps{
		SelfSignUpEnabled:  jsii.Bool(false),
		SignInAliases:      &awscognito.SignInAliases{Email: jsii.Bool(true)},
		AutoVerify:         &awscognito.AutoVerifiedAttrs{Email: jsii.Bool(true)},
		StandardAttributes: &awscognito.StandardAttributes{Fullname: &awscognito.StandardAttribute{Required: jsii.Bool(true), Mutable: jsii.Bool(true)}},
		PasswordPolicy: &awscognito.PasswordPolicy{
			MinLength: jsii.Number(12), RequireLowercase: jsii.Bool(true), RequireUppercase: jsii.Bool(true),
			RequireDigits: jsii.Bool(true), RequireSymbols: jsii.Bool(true),
			TempPasswordValidity: awscdk.Duration_Days(jsii.Number(3)),
		},
		Mfa:                mfa,
		AccountRecovery:    awscognito.AccountRecovery_EMAIL_ONLY,
		FeaturePlan:        awscognito.FeaturePlan_ESSENTIALS,
		DeletionProtection: jsii.Bool(cfg.Retain()),
		RemovalPolicy:      removal,
	}
	if mfa != awscognito.Mfa_OFF {
		// Authenticator apps only: SMS would need an SNS role and costs per message.
		props.MfaSecondFactor = &awscognito.MfaSecondFactor{Otp: jsii.Bool(true), Sms: jsii.Bool(false)}
	}
	pool := awscognito.NewUserPool(s.Stack, jsii.String("UserPool"), props)
	suppressions := []*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-COG8"),
		Reason: jsii.String("The Plus feature plan (threat protection) is billed per monthly active user; this pool has administrator-created " +
			"users only, a 12-character password policy and MFA (required in prod), and the API is throttled. An environment that needs " +
			"threat protection sets jwt in cdk.json to an identity provider that has it."),
	}}
	if mfa != awscognito.Mfa_REQUIRED {
		suppressions = append(suppressions, &cdknag.NagPackSuppression{
			Id: jsii.String("AwsSolutions-COG2"),
			Reason: jsii.String("MFA is chosen per environment (cdk.json signIn.mfa): optional in development environments so that test " +
				"users sign in without an authenticator; the configuration refuses anything but required for prod."),
		})
	}
	cdknag.NagSuppressions_AddResourceSuppressions(pool, &suppressions, jsii.Bool(false))
	s.UserPool = pool

	prefix := cfg.SignIn.DomainPrefix
	if prefix == "" {
		prefix = "tracinglocks-" + s.envName + "-" + *awscdk.Aws_ACCOUNT_ID()
	}
	s.UserPoolDomain = pool.AddDomain(jsii.String("Domain"), &awscognito.UserPoolDomainOptions{
		CognitoDomain:       &awscognito.CognitoDomainOptions{DomainPrefix: jsii.String(prefix)},
		ManagedLoginVersion: awscognito.ManagedLoginVersion_NEWER_MANAGED_LOGIN,
	})

	read := awscognito.NewClientAttributes().WithStandardAttributes(&awscognito.StandardAttributesMask{
		Email: jsii.Bool(true), EmailVerified: jsii.Bool(true), Fullname: jsii.Bool(true),
	})
	// Users may change nothing the API trusts: not the name (the display
	// name), not the email (the fallback display name and the sign-in alias).
	write := awscognito.NewClientAttributes().WithStandardAttributes(&awscognito.StandardAttributesMask{
		Locale: jsii.Bool(true), Timezone: jsii.Bool(true),
	})
	scopes := []awscognito.OAuthScope{awscognito.OAuthScope_OPENID(), awscognito.OAuthScope_EMAIL(), awscognito.OAuthScope_PROFILE()}
	client := pool.AddClient(jsii.String("BrowserClient"), &awscognito.UserPoolClientOptions{
		GenerateSecret: jsii.Bool(false),
		// No SRP, password or custom auth API flows: sign-in happens on the
		// managed login pages only; refresh tokens are always allowed.
		AuthFlows: &awscognito.AuthFlow{},
		OAuth: &awscognito.OAuthSettings{
			Flows:  &awscognito.OAuthFlows{AuthorizationCodeGrant: jsii.Bool(true), ImplicitCodeGrant: jsii.Bool(false), ClientCredentials: jsii.Bool(false)},
			Scopes: &scopes,
		},
		SupportedIdentityProviders: &[]awscognito.UserPoolClientIdentityProvider{awscognito.UserPoolClientIdentityProvider_COGNITO()},
		ReadAttributes:             read,
		WriteAttributes:            write,
		PreventUserExistenceErrors: jsii.Bool(true),
		AccessTokenValidity:        awscdk.Duration_Hours(jsii.Number(1)),
		IdTokenValidity:            awscdk.Duration_Hours(jsii.Number(1)),
		RefreshTokenValidity:       awscdk.Duration_Days(jsii.Number(30)),
		EnableTokenRevocation:      jsii.Bool(true),
	})
	// Only refresh tokens through the API flows; Cognito's default when
	// none are named would also allow SRP and custom auth.
	client.Node().DefaultChild().(awscognito.CfnUserPoolClient).SetExplicitAuthFlows(jsii.Strings("ALLOW_REFRESH_TOKEN_AUTH"))
	s.UserPoolClient = client
	// Managed login needs a style for the client: Cognito's own.
	awscognito.NewCfnManagedLoginBranding(s.Stack, jsii.String("ManagedLoginBranding"), &awscognito.CfnManagedLoginBrandingProps{
		UserPoolId:               pool.UserPoolId(),
		ClientId:                 client.UserPoolClientId(),
		UseCognitoProvidedValues: jsii.Bool(true),
	})
	awscdk.NewCfnOutput(s.Stack, jsii.String("UserPoolId"), &awscdk.CfnOutputProps{Value: pool.UserPoolId(), Description: jsii.String("Cognito user pool")})
	awscdk.NewCfnOutput(s.Stack, jsii.String("UserPoolClientId"), &awscdk.CfnOutputProps{Value: client.UserPoolClientId(), Description: jsii.String("Browser client ID (the JWT audience)")})
	awscdk.NewCfnOutput(s.Stack, jsii.String("SignInDomain"), &awscdk.CfnOutputProps{Value: s.UserPoolDomain.BaseUrl(nil), Description: jsii.String("Cognito managed login")})
	return pool, client
}
