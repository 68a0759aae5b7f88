package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2authorizers"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// addHTTPAPI creates the HTTP API in front of the api function: the JWT
// authorizer (the stack's user pool, or Config.JWT's issuer), the
// authorized /{proxy+} routes, the one unauthorized beacon-release route,
// and the throttled $default stage with JSON access logs.
func (s *Stack) addHTTPAPI() {
	cfg := s.cfg
	var authorizer awsapigatewayv2.IHttpRouteAuthorizer
	if cfg.JWT != nil {
		authorizer = awsapigatewayv2authorizers.NewHttpJwtAuthorizer(jsii.String("JwtAuthorizer"), jsii.String(cfg.JWT.Issuer),
			&awsapigatewayv2authorizers.HttpJwtAuthorizerProps{JwtAudience: jsii.Strings(cfg.JWT.Audience...)})
	} else {
		_, client := s.userPool(cfg, s.removal)
		authorizer = awsapigatewayv2authorizers.NewHttpJwtAuthorizer(jsii.String("JwtAuthorizer"), s.issuer(),
			&awsapigatewayv2authorizers.HttpJwtAuthorizerProps{JwtAudience: &[]*string{client.UserPoolClientId()}})
	}
	var cors *awsapigatewayv2.CorsPreflightOptions
	if cfg.CORSOrigin != "" {
		// Only for a page on another origin (corsOrigin): the deployed page
		// shares the distribution's origin with the API.
		cors = &awsapigatewayv2.CorsPreflightOptions{
			AllowOrigins: jsii.Strings(cfg.CORSOrigin),
			AllowMethods: &[]awsapigatewayv2.CorsHttpMethod{
				awsapigatewayv2.CorsHttpMethod_GET, awsapigatewayv2.CorsHttpMethod_POST, awsapigatewayv2.CorsHttpMethod_PUT,
				awsapigatewayv2.CorsHttpMethod_PATCH, awsapigatewayv2.CorsHttpMethod_DELETE, awsapigatewayv2.CorsHttpMethod_OPTIONS,
			},
			AllowHeaders:  jsii.Strings("authorization", "content-type", "accept", "lease-id", "idempotency-key"),
			ExposeHeaders: jsii.Strings("link", "x-request-id", "content-disposition"),
			MaxAge:        awscdk.Duration_Hours(jsii.Number(1)),
		}
	}
	s.API = awsapigatewayv2.NewHttpApi(s.Stack, jsii.String("HttpApi"), &awsapigatewayv2.HttpApiProps{
		Description:        jsii.String("Movie tracing locks API (" + s.envName + ")"),
		CreateDefaultStage: jsii.Bool(false),
		// API Gateway answers preflight OPTIONS itself (no OPTIONS route
		// exists), without the authorizer.
		CorsPreflight: cors,
	})
	integration := awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String("ApiIntegration"), s.Functions[API], nil)
	s.API.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
		Path: jsii.String("/{proxy+}"),
		// Not ANY: an ANY route would also take OPTIONS and put preflight
		// requests behind the authorizer.
		Methods: &[]awsapigatewayv2.HttpMethod{
			awsapigatewayv2.HttpMethod_GET, awsapigatewayv2.HttpMethod_POST, awsapigatewayv2.HttpMethod_PUT,
			awsapigatewayv2.HttpMethod_PATCH, awsapigatewayv2.HttpMethod_DELETE,
		},
		Integration: integration,
		Authorizer:  authorizer,
	})
	// The page's unload release goes through navigator.sendBeacon, which
	// cannot send an Authorization header; the lease ID in the body is the
	// whole capability Release needs. More specific than /{proxy+}, so this
	// one route skips the authorizer.
	for _, r := range *s.API.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
		Path:        jsii.String(BeaconReleasePath),
		Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_POST},
		Integration: integration,
		Authorizer:  awsapigatewayv2.NewHttpNoneAuthorizer(),
	}) {
		cdknag.NagSuppressions_AddResourceSuppressions(r, &[]*cdknag.NagPackSuppression{{
			Id: jsii.String("AwsSolutions-APIG4"),
			Reason: jsii.String("navigator.sendBeacon (the page-unload lease release) cannot send an Authorization header. The route " +
				"only releases the analysis lease whose 128-bit ID is in the body, the capability the holder was given; it names no user, " +
				"returns nothing, and cannot touch a tracing lease or another browser's lease."),
		}}, jsii.Bool(true))
	}
	accessLogs := awslogs.NewLogGroup(s.Stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		Retention: s.retention, RemovalPolicy: s.removal,
	})
	s.Stage = s.API.AddStage(jsii.String("DefaultStage"), &awsapigatewayv2.HttpStageOptions{
		StageName:  jsii.String("$default"),
		AutoDeploy: jsii.Bool(true),
		Throttle: &awsapigatewayv2.ThrottleSettings{
			RateLimit: jsii.Number(cfg.Throttle.RateLimit), BurstLimit: jsii.Number(cfg.Throttle.BurstLimit),
		},
	})
	// Access logs through the L1 stage: the L2 takes them as an interface a
	// Go value would have to implement through jsii.
	s.Stage.Node().DefaultChild().(awsapigatewayv2.CfnStage).SetAccessLogSettings(&awsapigatewayv2.CfnStage_AccessLogSettingsProperty{
		DestinationArn: accessLogs.LogGroupArn(),
		Format:         jsii.String(AccessLogFormat),
	})
}

// BeaconReleasePath is the one route without the JWT authorizer.
const BeaconReleasePath = "/movies/{id}/analysis-lease/release"

// AccessLogFormat is the HTTP API's access log line: JSON, with the caller's
// subject but never a token.
const AccessLogFormat = `{"requestId":"$context.requestId","requestTime":"$context.requestTimeEpoch",` +
	`"ip":"$context.identity.sourceIp","method":"$context.httpMethod","path":"$context.path",` +
	`"routeKey":"$context.routeKey","status":"$context.status","protocol":"$context.protocol",` +
	`"responseLength":"$context.responseLength","latencyMs":"$context.responseLatency",` +
	`"integrationLatencyMs":"$context.integrationLatency","integrationError":"$context.integrationErrorMessage",` +
	`"authorizerError":"$context.authorizer.error","sub":"$context.authorizer.claims.sub"}`
