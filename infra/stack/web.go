package stack

import (
	"path/filepath"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudfront"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudfrontorigins"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3deployment"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/movietrace/tracinglocks/web/authconfig"
)

// WebDir is the page's directory under the asset root: index.html, the
// JavaScript modules, style.css and auth.js (`make web-dist` fills it).
const WebDir = "web"

// APIPathPatterns are the paths the distribution sends to the HTTP API;
// everything else is the page, from the site bucket.
var APIPathPatterns = []string{"/movies*", "/openapi.json"}

// AuthConfigFile is the page's sign-in settings, deployed next to it (the
// local stack serves the same JSON at /auth-config.json).
const AuthConfigFile = authconfig.File

// MovieCORSHeaders are the request headers a page may send to the movies
// bucket: the ones every presigned upload signs (content-type, the pending
// tag, If-None-Match: * so an upload never replaces a file) and a part's
// content-md5 in a multipart upload.
var MovieCORSHeaders = []string{"content-type", "x-amz-tagging", "if-none-match", "content-md5"}

// movieCORSRule lets a page at origin PUT uploads (a whole file, or the
// parts of a multipart upload, whose ETag the page must read to complete
// it) and GET frame images.
func movieCORSRule(origin *string) *awss3.CorsRule {
	return &awss3.CorsRule{
		AllowedMethods: &[]awss3.HttpMethods{awss3.HttpMethods_PUT, awss3.HttpMethods_GET},
		AllowedOrigins: &[]*string{origin},
		AllowedHeaders: jsii.Strings(MovieCORSHeaders...),
		ExposedHeaders: jsii.Strings("etag"),
		MaxAge:         jsii.Number(3600),
	}
}

// addWeb creates one origin for the browser: a CloudFront distribution
// serving the page from a private bucket (origin access control) and the
// API paths from the HTTP API, so there is no CORS between them and the
// page's sendBeacon release reaches the API; a response headers policy with
// CSP, HSTS and frame-ancestors on both; the page deployed into the bucket
// with its auth-config.json; the Cognito client's callback and logout URLs
// set to the distribution.
func (s *Stack) addWeb() {
	s.SiteBucket = awss3.NewBucket(s.Stack, jsii.String("SiteBucket"), &awss3.BucketProps{
		BlockPublicAccess:      awss3.BlockPublicAccess_BLOCK_ALL(),
		Encryption:             awss3.BucketEncryption_S3_MANAGED,
		EnforceSSL:             jsii.Bool(true),
		ObjectOwnership:        awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		RemovalPolicy:          s.removal,
		AutoDeleteObjects:      jsii.Bool(!s.cfg.Retain()),
		ServerAccessLogsBucket: s.MovieAccessLogs,
		ServerAccessLogsPrefix: jsii.String("site/"),
	})

	s.HeadersPolicy = awscloudfront.NewResponseHeadersPolicy(s.Stack, jsii.String("SecurityHeaders"), &awscloudfront.ResponseHeadersPolicyProps{
		Comment: jsii.String("Movie tracing (" + s.envName + "): CSP, HSTS, no framing, no sniffing, no referrer"),
		SecurityHeadersBehavior: &awscloudfront.ResponseSecurityHeadersBehavior{
			ContentSecurityPolicy: &awscloudfront.ResponseHeadersContentSecurityPolicy{
				ContentSecurityPolicy: s.contentSecurityPolicy(), Override: jsii.Bool(true),
			},
			StrictTransportSecurity: &awscloudfront.ResponseHeadersStrictTransportSecurity{
				AccessControlMaxAge: awscdk.Duration_Days(jsii.Number(730)), IncludeSubdomains: jsii.Bool(true), Override: jsii.Bool(true),
			},
			FrameOptions:       &awscloudfront.ResponseHeadersFrameOptions{FrameOption: awscloudfront.HeadersFrameOption_DENY, Override: jsii.Bool(true)},
			ContentTypeOptions: &awscloudfront.ResponseHeadersContentTypeOptions{Override: jsii.Bool(true)},
			ReferrerPolicy:     &awscloudfront.ResponseHeadersReferrerPolicy{ReferrerPolicy: awscloudfront.HeadersReferrerPolicy_NO_REFERRER, Override: jsii.Bool(true)},
		},
	})

	// The HTTP API's host: https://<id>.execute-api.<region>.amazonaws.com.
	apiHost := awscdk.Fn_Select(jsii.Number(2), awscdk.Fn_Split(jsii.String("/"), s.API.ApiEndpoint(), nil))
	api := &awscloudfront.BehaviorOptions{
		Origin: awscloudfrontorigins.NewHttpOrigin(apiHost, &awscloudfrontorigins.HttpOriginProps{
			ProtocolPolicy:     awscloudfront.OriginProtocolPolicy_HTTPS_ONLY,
			OriginSslProtocols: &[]awscloudfront.OriginSslPolicy{awscloudfront.OriginSslPolicy_TLS_V1_2},
		}),
		AllowedMethods:        awscloudfront.AllowedMethods_ALLOW_ALL(),
		CachePolicy:           awscloudfront.CachePolicy_CACHING_DISABLED(),
		OriginRequestPolicy:   awscloudfront.OriginRequestPolicy_ALL_VIEWER_EXCEPT_HOST_HEADER(),
		ViewerProtocolPolicy:  awscloudfront.ViewerProtocolPolicy_HTTPS_ONLY,
		ResponseHeadersPolicy: s.HeadersPolicy,
	}
	behaviors := map[string]*awscloudfront.BehaviorOptions{}
	for _, p := range APIPathPatterns {
		behaviors[p] = api
	}
	s.Distribution = awscloudfront.NewDistribution(s.Stack, jsii.String("Distribution"), &awscloudfront.DistributionProps{
		Comment: jsii.String("Movie tracing (" + s.envName + "): the page and the API on one origin"),
		DefaultBehavior: &awscloudfront.BehaviorOptions{
			Origin:                awscloudfrontorigins.S3BucketOrigin_WithOriginAccessControl(s.SiteBucket, nil),
			ViewerProtocolPolicy:  awscloudfront.ViewerProtocolPolicy_REDIRECT_TO_HTTPS,
			CachePolicy:           awscloudfront.CachePolicy_CACHING_OPTIMIZED(),
			ResponseHeadersPolicy: s.HeadersPolicy,
		},
		AdditionalBehaviors: &behaviors,
		DefaultRootObject:   jsii.String("index.html"),
		HttpVersion:         awscloudfront.HttpVersion_HTTP2_AND_3,
		PriceClass:          awscloudfront.PriceClass_PRICE_CLASS_100,
	})
	cdknag.NagSuppressions_AddResourceSuppressions(s.Distribution, &[]*cdknag.NagPackSuppression{
		{Id: jsii.String("AwsSolutions-CFR1"), Reason: jsii.String("The page is for named, administrator-created users wherever they are; there is no country to block.")},
		{Id: jsii.String("AwsSolutions-CFR2"), Reason: jsii.String("No WAF web ACL: its fixed monthly cost is most of this stack's cost at rest; every API route but the beacon release needs a Cognito JWT and the API stage is throttled.")},
		{Id: jsii.String("AwsSolutions-CFR3"), Reason: jsii.String("The API's requests are in the HTTP API access logs; the page is static files. Standard logging would need an ACL-enabled log bucket for little more.")},
		{Id: jsii.String("AwsSolutions-CFR4"), Reason: jsii.String("The distribution uses the default *.cloudfront.net certificate, for which CloudFront fixes the TLS policy; an environment with its own domain and certificate sets TLSv1.2_2021.")},
	}, jsii.Bool(false))

	origin := "https://" + *s.Distribution.DistributionDomainName()
	s.MoviesBucket.AddCorsRule(movieCORSRule(jsii.String(origin)))

	sources := []awss3deployment.ISource{
		awss3deployment.Source_Asset(jsii.String(filepath.Join(s.assetRoot, WebDir)), nil),
		awss3deployment.Source_JsonData(jsii.String(AuthConfigFile), s.authConfig(), nil),
	}
	awss3deployment.NewBucketDeployment(s.Stack, jsii.String("SiteDeployment"), &awss3deployment.BucketDeploymentProps{
		DestinationBucket: s.SiteBucket,
		Sources:           &sources,
		Distribution:      s.Distribution,
		DistributionPaths: jsii.Strings("/*"),
		Prune:             jsii.Bool(true),
		RetainOnDelete:    jsii.Bool(s.cfg.Retain()),
		MemoryLimit:       jsii.Number(256),
	})
	for _, c := range *s.Stack.Node().Children() {
		if id := *c.Node().Id(); strings.HasPrefix(id, "Custom::CDKBucketDeployment") {
			cdknag.NagSuppressions_AddResourceSuppressions(c, &[]*cdknag.NagPackSuppression{
				{Id: jsii.String("AwsSolutions-IAM4"), Reason: jsii.String("CDK's own BucketDeployment function uses the AWS managed basic execution policy; it only writes its logs.")},
				{Id: jsii.String("AwsSolutions-IAM5"), Reason: jsii.String("CDK's own BucketDeployment grants its function object wildcards on the site bucket and the asset bucket, and cloudfront:CreateInvalidation; it copies the page and invalidates the cache.")},
				{Id: jsii.String("AwsSolutions-L1"), Reason: jsii.String("CDK's own BucketDeployment function pins its runtime; it runs only during deployments.")},
			}, jsii.Bool(true))
		}
	}

	if s.UserPoolClient != nil {
		urls := []*string{jsii.String(origin + "/")}
		if s.cfg.CORSOrigin != "" {
			urls = append(urls, jsii.String(strings.TrimSuffix(s.cfg.CORSOrigin, "/")+"/"))
		}
		cfn := s.UserPoolClient.Node().DefaultChild().(awscognito.CfnUserPoolClient)
		cfn.SetCallbackUrLs(&urls)
		cfn.SetLogoutUrLs(&urls)
	}
	awscdk.NewCfnOutput(s.Stack, jsii.String("PageUrl"), &awscdk.CfnOutputProps{Value: jsii.String(origin + "/"), Description: jsii.String("The page (and the API under the same origin)")})
	awscdk.NewCfnOutput(s.Stack, jsii.String("SiteBucketName"), &awscdk.CfnOutputProps{Value: s.SiteBucket.BucketName(), Description: jsii.String("Bucket of the page's files")})
}

// signInOrigin is the origin of the sign-in pages and the token endpoint:
// the Cognito managed login domain, or the external issuer's.
func (s *Stack) signInOrigin() string {
	if s.UserPoolDomain != nil {
		return *s.UserPoolDomain.BaseUrl(nil)
	}
	return origin(s.cfg.JWT.Issuer)
}

// contentSecurityPolicy: scripts, styles and fetches from the origin only,
// plus the issuer's origin (oidc-client-ts fetches the discovery document
// there: Cognito's is cognito-idp.<region>.amazonaws.com, not the login
// domain), the sign-in origin (token requests, the sign-in form) and the
// region's S3 endpoints (presigned uploads and frame images: the movies
// bucket's own name would make the policy depend on the bucket, whose CORS
// depends on the distribution).
func (s *Stack) contentSecurityPolicy() *string {
	signIn := s.signInOrigin()
	connect := signIn
	if issuer := *s.issuerOrigin(); issuer != signIn {
		connect = issuer + " " + signIn
	}
	s3 := "https://*.s3." + *awscdk.Aws_REGION() + ".amazonaws.com"
	return jsii.String(strings.Join([]string{
		"default-src 'self'",
		"script-src 'self'",
		"style-src 'self'",
		"img-src 'self' blob: data: " + s3,
		"media-src 'self' blob: " + s3,
		"connect-src 'self' " + connect + " " + s3,
		"form-action 'self' " + signIn,
		"frame-ancestors 'none'",
		"base-uri 'none'",
		"object-src 'none'",
	}, "; "))
}

// authConfig is the page's auth-config.json, written by the same code as
// the local stack's (web/authconfig): the issuer, the browser client and
// Cognito's logout endpoint.
func (s *Stack) authConfig() map[string]any {
	if s.UserPoolClient != nil {
		client := *s.UserPoolClient.UserPoolClientId()
		return authconfig.OIDC(*s.issuer(), client, authconfig.CognitoLogoutURL(*s.UserPoolDomain.BaseUrl(nil), client)).Map()
	}
	return authconfig.OIDC(s.cfg.JWT.Issuer, s.cfg.JWT.Audience[0], "").Map()
}
