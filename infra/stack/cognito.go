package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// userPool creates the default identity provider: a Cognito user pool with
// administrator-created users, and a public browser client (SRP sign-in, no
// secret) whose ID is the JWT audience.
func (s *Stack) userPool(cfg Config, removal awscdk.RemovalPolicy) (awscognito.UserPool, awscognito.UserPoolClient) {
	pool := awscognito.NewUserPool(s.Stack, jsii.String("UserPool"), &awscognito.UserPoolProps{
		SelfSignUpEnabled:  jsii.Bool(false),
		SignInAliases:      &awscognito.SignInAliases{Email: jsii.Bool(true)},
		AutoVerify:         &awscognito.AutoVerifiedAttrs{Email: jsii.Bool(true)},
		StandardAttributes: &awscognito.StandardAttributes{Fullname: &awscognito.StandardAttribute{Required: jsii.Bool(true), Mutable: jsii.Bool(true)}},
		PasswordPolicy: &awscognito.PasswordPolicy{
			MinLength: jsii.Number(12), RequireLowercase: jsii.Bool(true), RequireUppercase: jsii.Bool(true),
			RequireDigits: jsii.Bool(true), RequireSymbols: jsii.Bool(true),
			TempPasswordValidity: awscdk.Duration_Days(jsii.Number(3)),
		},
		// Authenticator apps only: SMS would need an SNS role and costs per message.
		Mfa:                awscognito.Mfa_REQUIRED,
		MfaSecondFactor:    &awscognito.MfaSecondFactor{Otp: jsii.Bool(true), Sms: jsii.Bool(false)},
		AccountRecovery:    awscognito.AccountRecovery_EMAIL_ONLY,
		FeaturePlan:        awscognito.FeaturePlan_ESSENTIALS,
		DeletionProtection: jsii.Bool(cfg.Retain()),
		RemovalPolicy:      removal,
	})
	cdknag.NagSuppressions_AddResourceSuppressions(pool, &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-COG8"),
		Reason: jsii.String("The Plus feature plan (threat protection) is billed per monthly active user; this pool has administrator-created " +
			"users only, requires MFA and a 12-character password policy, and the API is throttled. An environment that needs threat " +
			"protection sets jwt in cdk.json to an identity provider that has it."),
	}}, jsii.Bool(false))
	s.UserPool = pool
	client := pool.AddClient(jsii.String("BrowserClient"), &awscognito.UserPoolClientOptions{
		GenerateSecret:             jsii.Bool(false),
		AuthFlows:                  &awscognito.AuthFlow{UserSrp: jsii.Bool(true)},
		PreventUserExistenceErrors: jsii.Bool(true),
		AccessTokenValidity:        awscdk.Duration_Hours(jsii.Number(1)),
		IdTokenValidity:            awscdk.Duration_Hours(jsii.Number(1)),
		RefreshTokenValidity:       awscdk.Duration_Days(jsii.Number(30)),
		EnableTokenRevocation:      jsii.Bool(true),
	})
	awscdk.NewCfnOutput(s.Stack, jsii.String("UserPoolId"), &awscdk.CfnOutputProps{Value: pool.UserPoolId(), Description: jsii.String("Cognito user pool")})
	awscdk.NewCfnOutput(s.Stack, jsii.String("UserPoolClientId"), &awscdk.CfnOutputProps{Value: client.UserPoolClientId(), Description: jsii.String("Browser client ID (the JWT audience)")})
	return pool, client
}
