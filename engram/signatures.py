"""Technologies a task names without naming them: `useEffect` is React, `goroutine` is Go.

A bug report pastes an API, an error class or a file name (`UICollectionView`, `getStaticPaths`,
`CMakeLists.txt`) and rarely says which stack it is about; a memory about that stack names the
stack. Each technology here has the identifiers, vocabulary and error messages that tell an expert
at once which one it is, and a task holding one gets the technology's name as an anchor of its own
(`route.anchors_of`), matched where memories name their subject (id, tags, directive, applies_to);
so does a task naming it by a name no memory may use (`renamed`: `GMS2`, `sklearn`). The table was
written for engram from general programming knowledge, in six passes by helpers who saw neither the
code nor any labelled task, then filtered mechanically (the third to sixth by
`benchmarks/signature_table.py`; docs/routing.md). A name written in Hangul, katakana or Chinese
characters (리액트, 鸿蒙), which no English memory holds, gives the same anchor (`SCRIPT_NAMES`, kept
outside the literals the script rewrites), and so does an identifier whose words are common but
which the text writes as code (`CODE`: `on_delete`, `target_link_libraries`, `in_code`). Stdlib only.
"""

from __future__ import annotations

import re

from .signature_cache import lookup

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (docs/architecture.md)
if TYPE_CHECKING:
    from .terms import Word

MAX_IMPLIED = 3  # technologies a task implies at most: a pasted log names many things in passing
CODE_PARTS = 5  # the most parts (joined by `.` or `::`) of a `CODE` identifier
# An identifier as code writes it, its words joined by `_`, `.` or `::` (`target_link_libraries`,
# `op.add_column`), not part of a path, a hyphenated word or a longer identifier.
CODE_IDENTIFIER = re.compile(
    r"(?<![\w$.:/-])(?:[a-z_$][\w$]*(?:(?:\.|::)[a-z_$][\w$]*)+|[a-z$][\w$]*_[\w$]+)(?![\w$])", re.IGNORECASE
)
CODE_JOINT = re.compile(r"(\.|::)")  # split on it, an identifier's parts with its joints between them
# NAMES: per technology, the terms its name and aliases are indexed as (`spring-boot` -> springboot,
# as ids and tags glue their words). The signatures, their first words and the identifiers written
# as code are in `signature_tables`, looked up word by word (`signature_cache`).
# fmt: off
NAMES: dict[str, tuple[str, ...]] = {
    'actix': ('actix', 'actixweb'),
    'airflow': ('airflow', 'apacheairflow'),
    'akka': ('akka', 'akkahttp', 'akkastream', 'akkanet', 'pekko', 'apachepekko'),
    'alembic': ('alembic',),
    'algolia': ('algolia', 'algoliasearch', 'docsearch', 'algoliadocsearch', 'instantsearch'),
    'alpinejs': ('alpinej',),
    'android': ('android', 'androidsdk'),
    'angular': ('angular', 'angular2', 'angularcli'),
    'ansible': ('ansibl',),
    'anthropic-sdk': ('anthropicsdk', 'anthropic', 'anthropicapi', 'claudeapi', 'claud'),
    'apollo': ('apollo', 'apolloclient', 'apollographql'),
    'appium': ('appium', 'appiumserver'),
    'arduino': ('arduino', 'arduinoid'),
    'argo-cd': ('argocd',),
    'aspnet-core': ('aspnetcor', 'aspnet'),
    'astro': ('astro', 'astroj'),
    'auth0': ('auth0',),
    'aws': ('aws', 'amazonwebservic', 'awssdk', 'boto3', 'awscli', 'amazonaw', 'awsiam', 'awsec2'),
    'aws-bedrock': ('awsbedrock', 'bedrock', 'amazonbedrock', 'bedrockruntim'),
    'aws-cdk': ('awscdk', 'cdk'),
    'aws-cognito': ('awscognito', 'cognito', 'amazoncognito', 'cognitouserpool'),
    'aws-lambda': ('awslambda',),
    'aws-s3': ('awss3', 's3', 'amazons3'),
    'aws-sqs': ('awssq', 'sqs', 'amazonsq'),
    'axum': ('axum',),
    'azure': ('azur', 'microsoftazur', 'azurecli', 'azcli', 'azuresdk', 'azureblobstorag'),
    'azure-devops': ('azuredevop', 'azurepipelin', 'vst', 'tfs', 'azurerepo', 'azureboard'),
    'azure-functions': ('azurefunction', 'azurefunctionscoretool', 'durablefunction'),
    'babel': ('babel', 'babelj'),
    'bash': ('bash', 'shellscript'),
    'bazel': ('bazel', 'bazelisk', 'bzlmod', 'blaz'),
    'bevy': ('bevy', 'bevyengin'),
    'bigquery': ('bigquery', 'googlebigquery', 'bq', 'gbq'),
    'biome': ('biom', 'biomej'),
    'bitbucket-pipelines': ('bitbucketpipelin', 'bitbucket', 'bitbucketcloud', 'bitbucketserver'),
    'blazor': ('blazor',),
    'bootstrap': ('bootstrap', 'twb'),
    'bun': ('bun', 'bunj'),
    'bundler': ('bundler', 'rubygem', 'gemfil'),
    'capacitor': ('capacitor', 'capacitorj', 'ioniccapacitor'),
    'cargo': ('cargo', 'cratesio', 'cargotoml'),
    'cassandra': ('cassandra', 'apachecassandra', 'scylladb', 'scylla', 'datastax', 'astradb'),
    'celery': ('celery',),
    'chartjs': ('chartj',),
    'chromadb': ('chromadb', 'chroma'),
    'chrome-apis': ('chromeapis', 'chromeapi'),
    'chrome-extension': ('chromeextension', 'browserextension', 'webextension'),
    'circleci': ('circleci',),
    'claude-code': ('claudecod', 'claudecli'),
    'clerk': ('clerk', 'clerkcom', 'clerkj', 'clerkauth'),
    'clickhouse': ('clickhous', 'clickhousecloud'),
    'clojure': ('clojur', 'clj'),
    'cloudflare-workers': ('cloudflareworker', 'cloudflar', 'cloudflarepag', 'cfworker', 'workerskv', 'durableobject', 'cloudflared1', 'cloudflarer2'),
    'cloudformation': ('cloudformation', 'cfn', 'awscloudformation'),
    'cmake': ('cmak',),
    'cocoapods': ('cocoapod',),
    'composer': ('composer', 'packagist'),
    'conda': ('conda', 'anaconda', 'miniconda', 'mamba', 'micromamba', 'miniforg'),
    'contentful': ('contentful',),
    'convex': ('convex', 'convexdev'),
    'cosmos-db': ('cosmosdb', 'azurecosmosdb', 'azurecosmo'),
    'cpp': ('cpp', 'cplusplus', 'cxx'),
    'csharp': ('csharp',),
    'cucumber': ('cucumber', 'cucumberj'),
    'cuda': ('cuda',),
    'cursor-ide': ('cursorid', 'cursorai', 'cursoreditor', 'cursorrul'),
    'cypress': ('cypress',),
    'd3': ('d3', 'd3js'),
    'dart': ('dart',),
    'databricks': ('databrick', 'databrickssql', 'azuredatabrick', 'deltalak', 'unitycatalog'),
    'datadog': ('datadog', 'datadogagent', 'ddtrac'),
    'dbt': ('dbt', 'dbtcor'),
    'deno': ('deno', 'denoland'),
    'discord-bot': ('discordbot', 'discordj', 'discordpy', 'discordapi', 'discord'),
    'django': ('django', 'drf'),
    'django-rest-framework': ('djangorestframework', 'drf'),
    'docker': ('docker',),
    'doctrine': ('doctrin',),
    'docusaurus': ('docusaurus',),
    'dragonruby': ('dragonruby', 'dragonrubygtk', 'drgtk'),
    'drizzle': ('drizzl', 'drizzleorm', 'drizzlekit'),
    'drupal': ('drupal', 'drupal7', 'drupal8', 'drupal9', 'drupal10'),
    'duckdb': ('duckdb', 'motherduck'),
    'dynamodb': ('dynamodb',),
    'elasticsearch': ('elasticsearch',),
    'electron': ('electron', 'electronj'),
    'elixir': ('elixir',),
    'elm': ('elm', 'elmlang'),
    'ember': ('ember', 'emberj'),
    'entity-framework': ('entityframework', 'efcor', 'entityframeworkcor'),
    'entra-id': ('entraid', 'azuread', 'azureactivedirectory', 'msal', 'microsoftentra', 'aad', 'microsoftidentityplatform'),
    'erlang': ('erlang', 'erlangotp'),
    'esbuild': ('esbuild',),
    'eslint': ('eslint', 'typescripteslint'),
    'esp32': ('esp32', 'espidf'),
    'excel-vba': ('excelvba', 'vba', 'excelmacro'),
    'expo': ('expo',),
    'express': ('express', 'expressj'),
    'fastapi': ('fastapi',),
    'fastify': ('fastify',),
    'fastlane': ('fastlan',),
    'firebase': ('firebas',),
    'flask': ('flask',),
    'flutter': ('flutter',),
    'fortran': ('fortran',),
    'framer-motion': ('framermotion',),
    'gamemaker': ('gamemaker', 'gamemakerstudio', 'gms2', 'gml'),
    'gcp': ('gcp', 'googlecloud', 'googlecloudplatform', 'gcloud', 'cloudrun', 'googlecloudrun', 'gke', 'googlecloudstorag', 'gcs'),
    'gcp-pubsub': ('gcppubsub', 'googlepubsub', 'cloudpubsub', 'googlecloudpubsub'),
    'gemini-api': ('geminiapi', 'gemini', 'googlegemini', 'googlegenai', 'googlegenerativeai', 'vertexai'),
    'gherkin': ('gherkin', 'featurefil'),
    'gin': ('gin', 'gingonic'),
    'git': ('git',),
    'github-actions': ('githubaction', 'gha', 'ghaction'),
    'github-copilot': ('githubcopilot', 'copilot', 'copilotchat', 'ghcopilot', 'copilotagent'),
    'gitlab-ci': ('gitlabci', 'gitlabpipelin'),
    'go': ('go', 'golang'),
    'godot': ('godot', 'godotengin'),
    'golangci-lint': ('golangcilint', 'golangci'),
    'google-adk': ('googleadk', 'adkpython', 'adkjava', 'agentdevelopmentkit'),
    'google-apps-script': ('googleappsscript', 'appsscript'),
    'gorm': ('gorm', 'gogorm'),
    'gradle': ('gradl', 'gradlew', 'gradlekotlindsl', 'gradlewrapper'),
    'grafana': ('grafana',),
    'graphql': ('graphql', 'gql'),
    'grpc': ('grpc', 'protobuf', 'protocolbuffer', 'grpcweb', 'proto3', 'grpcgo', 'grpcjava'),
    'harmonyos': ('harmonyo', 'openharmony', 'hongmeng', 'arkt', 'arkui', 'oho'),
    'hashicorp-vault': ('hashicorpvault', 'vaultserver', 'openbao'),
    'haskell': ('haskell', 'hs', 'ghc'),
    'helm': ('helm',),
    'heroku': ('heroku',),
    'hibernate': ('hibernat', 'jpa', 'jpahibernat', 'springdatajpa'),
    'hono': ('hono', 'honoj'),
    'htmx': ('htmx',),
    'huggingface-transformers': ('huggingfacetransformer', 'transformer', 'huggingfac', 'hf'),
    'hugo': ('hugo', 'gohugo'),
    'intellij-platform': ('intellijplatform', 'intellij', 'jetbrain', 'intellijplugin', 'jetbrainsplugin', 'intellijsdk', 'intellijplatformsdk'),
    'ionic': ('ionic', 'ionicframework', 'ionicangular', 'ionicreact', 'ionicvu'),
    'istio': ('istio', 'istiomesh', 'istioservicemesh'),
    'java': ('java',),
    'jenkins': ('jenkin',),
    'jest': ('jest',),
    'jetpack-compose': ('jetpackcompos', 'androidxcompos'),
    'jquery': ('jquery', 'jq'),
    'julia': ('julia', 'julialang'),
    'junit': ('junit', 'junit5', 'junit4'),
    'jupyter': ('jupyter', 'jupyterlab', 'ipython'),
    'k6': ('k6', 'grafanak6'),
    'kafka': ('kafka', 'apachekafka'),
    'keras': ('kera',),
    'keycloak': ('keycloak', 'redhatsso', 'rhsso'),
    'knative': ('knativ', 'knativeserv', 'knativeevent', 'knativefunction'),
    'koa': ('koa', 'koaj'),
    'kotlin': ('kotlin', 'kt'),
    'kotlin-multiplatform': ('kotlinmultiplatform', 'kmp', 'kmm', 'composemultiplatform'),
    'ktor': ('ktor',),
    'kubernetes': ('kubernet', 'k8s', 'kub'),
    'langchain': ('langchain', 'langgraph'),
    'langgraph': ('langgraph', 'langgraphplatform', 'langgraphj'),
    'laravel': ('laravel',),
    'latex': ('latex', 'tex'),
    'lit': ('lit', 'litelement'),
    'llama-cpp': ('llamacpp', 'llamacpppython', 'gguf', 'ggml'),
    'llamaindex': ('llamaindex', 'gptindex'),
    'lua': ('lua',),
    'matlab': ('matlab', 'simulink'),
    'matplotlib': ('matplotlib', 'pyplot'),
    'maui': ('maui', 'dotnetmaui', 'netmaui', 'xamarin', 'xamarinform'),
    'maven': ('maven', 'apachemaven', 'mvn', 'mavenwrapper'),
    'mcp': ('mcp', 'modelcontextprotocol', 'mcpserver', 'mcpsdk', 'fastmcp'),
    'medusa': ('medusa', 'medusaj', 'medusacommerc'),
    'micronaut': ('micronaut',),
    'microsoft-graph': ('microsoftgraph', 'msgraph', 'microsoftgraphapi'),
    'minecraft-modding': ('minecraftmod', 'minecraftforg', 'neoforg', 'fabricmc', 'fabricmod', 'minecraft', 'spigot', 'bukkit', 'papermc'),
    'mintlify': ('mintlify', 'mintlifydoc'),
    'mkdocs': ('mkdoc', 'mkdocsmaterial', 'materialformkdoc'),
    'mlflow': ('mlflow',),
    'mobx': ('mobx', 'mst'),
    'mocha': ('mocha', 'mochaj'),
    'mockito': ('mockito', 'mockitokotlin'),
    'mongodb': ('mongodb', 'mongo'),
    'mongoose': ('mongoos', 'mongoosej'),
    'mpi': ('mpi', 'openmpi', 'mpich'),
    'mqtt': ('mqtt', 'mosquitto', 'mqttj', 'pahomqtt', 'emqx', 'hivemq'),
    'msbuild': ('msbuild', 'csproj', 'dotnetbuild', 'sdkstyleproject'),
    'msw': ('msw', 'mockserviceworker'),
    'mui': ('mui', 'materialui'),
    'mypy': ('mypy',),
    'mysql': ('mysql', 'mariadb'),
    'nativescript': ('nativescript', 'nativescriptvu', 'nativescriptangular', 'nativescriptcor'),
    'nats': ('nat', 'natsio', 'jetstream', 'natsserver'),
    'neo4j': ('neo4j',),
    'neovim': ('neovim', 'nvim', 'neovimplugin', 'nvimplugin', 'neovimlua'),
    'nestjs': ('nestj',),
    'netlify': ('netlify', 'netlifycli', 'netlifyfunction'),
    'new-relic': ('newrelic',),
    'next-auth': ('nextauth', 'authj', 'nextauthj'),
    'nextjs': ('nextj', 'next'),
    'nginx': ('nginx',),
    'ngrx': ('ngrx',),
    'nix': ('nix', 'nixo', 'nixpkg', 'nixflak', 'homemanager', 'nixdarwin'),
    'node': ('nod', 'nodej'),
    'npm': ('npm', 'npmj', 'npmcli', 'npx'),
    'nuget': ('nuget', 'nugetorg', 'nugetpackag'),
    'numpy': ('numpy',),
    'nuxt': ('nuxt', 'nuxtj', 'nuxt3'),
    'nx': ('nx', 'nrwl'),
    'objective-c': ('objectivec', 'objc'),
    'ocaml': ('ocaml',),
    'okta': ('okta', 'oktasdk', 'oktaauth'),
    'ollama': ('ollama',),
    'openai-api': ('openaiapi', 'openai'),
    'openapi': ('openapi', 'swagger', 'openapispec', 'swaggerui', 'oas'),
    'opencv': ('opencv', 'cv2', 'opencvpython', 'opencv4'),
    'opengl': ('opengl', 'glsl'),
    'openmp': ('openmp', 'omp'),
    'opentelemetry': ('opentelemetry', 'otel'),
    'oracle-db': ('oracledb', 'oracl', 'oracledatabas', 'plsql'),
    'orleans': ('orlean', 'microsoftorlean', 'msorlean'),
    'pandas': ('panda',),
    'passport-js': ('passportj',),
    'paypal': ('paypal', 'paypalapi', 'paypalcheckout'),
    'perl': ('perl', 'perl5'),
    'phoenix': ('phoenix', 'phoenixframework', 'phoenixliveview'),
    'php': ('php',),
    'phpunit': ('phpunit',),
    'pinecone': ('pinecon', 'pineconedb', 'pineconeclient'),
    'pip': ('pip', 'pip3', 'pypi', 'piptool', 'pythonpip'),
    'playwright': ('playwright',),
    'pnpm': ('pnpm',),
    'poetry': ('poetry', 'pythonpoetry'),
    'polars': ('polar',),
    'postgresql': ('postgresql', 'postgr', 'pg'),
    'powershell': ('powershell', 'pwsh', 'ps1'),
    'pre-commit': ('precommit', 'precommithook'),
    'preact': ('preact',),
    'prettier': ('prettier',),
    'prisma': ('prisma',),
    'prometheus': ('prometheus', 'promql'),
    'pulumi': ('pulumi',),
    'puppeteer': ('puppeteer',),
    'pydantic': ('pydantic',),
    'pygame': ('pygam',),
    'pytest': ('pytest',),
    'python': ('python', 'python3', 'py', 'cpython'),
    'pytorch': ('pytorch', 'torch'),
    'qt': ('qt', 'qt5', 'qt6', 'pyqt', 'pysid', 'qml'),
    'quarkus': ('quarkus',),
    'qwik': ('qwik',),
    'r': ('rlang', 'rstat'),
    'rabbitmq': ('rabbitmq',),
    'rails': ('rail', 'rubyonrail', 'ror'),
    'react': ('react', 'reactj'),
    'react-hook-form': ('reacthookform', 'rhf', 'hookform'),
    'react-native': ('reactnativ',),
    'react-router': ('reactrouter', 'reactrouterdom'),
    'redis': ('redis',),
    'redux': ('redux', 'reduxtoolkit', 'rtk', 'reduxj'),
    'remix': ('remix', 'remixrun'),
    'roblox': ('roblox', 'robloxstudio', 'luau', 'rojo'),
    'rollup': ('rollup', 'rollupj'),
    'ros': ('ros', 'ros2', 'ros1'),
    'rspec': ('rspec',),
    'rubocop': ('rubocop', 'standardrb'),
    'ruby': ('ruby', 'rb'),
    'ruff': ('ruff', 'ruffformat'),
    'rust': ('rust', 'rustlang'),
    'rxjs': ('rxj', 'rxjs7'),
    'salesforce-apex': ('salesforceapex', 'apex', 'salesforc'),
    'sanity-io': ('sanityio', 'sanitystudio', 'sanitycm'),
    'sass': ('sass', 'scss'),
    'scala': ('scala',),
    'scikit-learn': ('scikitlearn', 'sklearn', 'scikit'),
    'selenium': ('selenium', 'seleniumwebdriver'),
    'sendgrid': ('sendgrid', 'twiliosendgrid'),
    'sentry': ('sentry', 'sentryio'),
    'sequelize': ('sequeliz', 'sequelizecli', 'sequelizetypescript'),
    'serverless-framework': ('serverlessframework', 'sls', 'serverlesscom'),
    'shadcn': ('shadcn', 'shadcnui', 'radixui', 'radix', 'radixprimitiv'),
    'shopify-liquid': ('shopifyliquid', 'shopify', 'liquid'),
    'sidekiq': ('sidekiq',),
    'signalr': ('signalr', 'aspnetsignalr', 'azuresignalr'),
    'slack-api': ('slackapi', 'slackbot', 'slackapp', 'slackbolt', 'slacksdk', 'slack'),
    'snowflake': ('snowflak', 'snowflakedb', 'snowpark', 'snowflakecortex'),
    'socket-io': ('socketio', 'pythonsocketio', 'flasksocketio'),
    'solana': ('solana', 'solanaprogram', 'solanasdk', 'solanaweb3'),
    'solidity': ('solidity',),
    'solidjs': ('solidj',),
    'sonarqube': ('sonarqub', 'sonarcloud', 'sonar', 'sonarlint', 'sonarqubecloud'),
    'spark': ('spark', 'pyspark', 'apachespark'),
    'sphinx': ('sphinx', 'sphinxdoc', 'readthedoc'),
    'spring-boot': ('springboot', 'spring', 'springframework'),
    'sql-server': ('sqlserver', 'mssql', 'microsoftsqlserver', 'tsql', 'azuresql'),
    'sqlalchemy': ('sqlalchemy', 'sqla'),
    'sqlite': ('sqlit', 'sqlite3'),
    'stm32': ('stm32', 'stm32cube', 'stm32cubemx', 'stm32cubeide', 'stm32hal'),
    'storybook': ('storybook',),
    'strapi': ('strapi', 'strapicm'),
    'streamlit': ('streamlit', 'streamlitcloud'),
    'stripe': ('strip',),
    'styled-components': ('styledcomponent',),
    'stylelint': ('stylelint',),
    'supabase': ('supabas',),
    'svelte': ('svelt',),
    'sveltekit': ('sveltekit',),
    'swift': ('swift', 'swiftlang'),
    'swiftui': ('swiftui',),
    'symfony': ('symfony',),
    'tailwind': ('tailwind', 'tailwindcss'),
    'tanstack-query': ('tanstackquery', 'reactquery', 'vuequery'),
    'tauri': ('tauri', 'tauriapp'),
    'telegram-bot': ('telegrambot', 'telegram', 'telegrambotapi', 'tgbot'),
    'temporal': ('temporal', 'temporalio', 'temporalsdk', 'temporalworkflow'),
    'tensorflow': ('tensorflow',),
    'terraform': ('terraform', 'opentofu'),
    'testcontainers': ('testcontainer', 'testcontainersjava', 'testcontainersgo', 'testcontainerspython', 'testcontainersnod'),
    'testing-library': ('testinglibrary', 'reacttestinglibrary', 'domtestinglibrary', 'vuetestinglibrary'),
    'testrail': ('testrail',),
    'threejs': ('threej', 'r3f', 'reactthreefiber'),
    'tokio': ('tokio',),
    'trpc': ('trpc',),
    'turborepo': ('turborepo', 'turborepomonorepo'),
    'twilio': ('twilio', 'twilioapi', 'twiml'),
    'typeorm': ('typeorm',),
    'typescript': ('typescript', 'ts'),
    'typesense': ('typesens',),
    'typo3': ('typo3', 'typo3cms'),
    'uikit': ('uikit',),
    'unity': ('unity', 'unity3d'),
    'unreal': ('unreal', 'unrealengin', 'ue4', 'ue5'),
    'uv': ('uv', 'astraluv', 'uvx'),
    'vercel': ('vercel', 'zeit', 'zeitnow', 'vercelplatform'),
    'vercel-ai-sdk': ('vercelaisdk', 'aisdk', 'vercelai'),
    'vertx': ('vertx', 'eclipsevertx'),
    'vite': ('vit', 'vitej'),
    'vitest': ('vitest',),
    'vllm': ('vllm',),
    'vscode-extension': ('vscodeextension', 'vscodeapi', 'vscodeextensionapi', 'vsc'),
    'vue': ('vue', 'vuej', 'vue3'),
    'vulkan': ('vulkan',),
    'wandb': ('wandb', 'weightsandbias', 'weightsbias', 'wb'),
    'webassembly': ('webassembly', 'wasm'),
    'webpack': ('webpack',),
    'webrtc': ('webrtc',),
    'wordpress': ('wordpress', 'wp'),
    'wpf': ('wpf',),
    'xcode': ('xcod', 'xcodebuild', 'xcodecloud'),
    'xgboost': ('xgboost', 'xgb'),
    'xray': ('xray', 'xrayjira', 'getxray', 'xraytestmanagement', 'xraycloud'),
    'yarn': ('yarn', 'yarnpkg', 'yarnberry'),
    'zig': ('zig', 'ziglang'),
    'zod': ('zod',),
    'zustand': ('zustand',),
}
EVERYDAY_NAMES: frozenset[str] = frozenset({
    'airflow', 'akka', 'alembic', 'anaconda', 'android', 'angular', 'anthropic', 'apex', 'apollo', 'arduino', 'aws',
    'axum', 'azur', 'babel', 'bash', 'bedrock', 'bevy', 'bigquery', 'biom', 'blaz', 'bootstrap', 'bun', 'bundler',
    'bunj', 'capacitor', 'cargo', 'cassandra', 'celery', 'chroma', 'claud', 'clerk', 'clojur', 'composer', 'conda',
    'convex', 'copilot', 'cosmosdb', 'cucumber', 'cypress', 'dart', 'discord', 'django', 'docker', 'doctrin', 'drizzl',
    'drupal', 'dynamodb', 'elasticsearch', 'electron', 'elixir', 'elm', 'ember', 'erlang', 'expo', 'express', 'firebas',
    'flask', 'flutter', 'fortran', 'gemini', 'gherkin', 'gin', 'git', 'go', 'godot', 'gorm', 'haskell', 'helm',
    'heroku', 'hf', 'hibernat', 'hs', 'hugo', 'ionic', 'java', 'jenkin', 'jest', 'jetstream', 'julia', 'kafka', 'koa',
    'kotlin', 'kt', 'latex', 'liquid', 'lit', 'luau', 'mamba', 'mariadb', 'matlab', 'maui', 'maven', 'medusa', 'mocha',
    'mongo', 'mongodb', 'mongoos', 'mst', 'msw', 'mysql', 'nat', 'next', 'nix', 'nod', 'oas', 'ocaml', 'oho', 'okta',
    'oracl', 'orlean', 'panda', 'paypal', 'perl', 'pg', 'phoenix', 'php', 'pinecon', 'pip', 'playwright', 'poetry',
    'polar', 'postgresql', 'preact', 'prettier', 'prometheus', 'puppeteer', 'python', 'pytorch', 'qt', 'radix', 'rail',
    'rb', 'react', 'redis', 'redux', 'remix', 'ror', 'ros', 'ruby', 'ruff', 'rust', 'salesforc', 'sass', 'scala',
    'scylla', 'selenium', 'sentry', 'slack', 'snowflak', 'solidity', 'sonar', 'spark', 'sphinx', 'spigot', 'spring',
    'sqlit', 'storybook', 'strip', 'svelt', 'swagger', 'swift', 'tailwind', 'telegram', 'temporal', 'tensorflow',
    'terraform', 'tex', 'tokio', 'torch', 'transformer', 'ts', 'typescript', 'unity', 'unreal', 'uv', 'vba', 'vit',
    'wasm', 'wb', 'wordpress', 'wp', 'xamarin', 'yarn', 'zig',
})
# fmt: on
# Technologies' names as developers write them in Hangul, katakana or Chinese characters (리액트,
# 스프링부트, パイソン, 鸿蒙): a name, found at the start of a CJK word (Korean glues particles
# after it: 리액트에서); the longest one a word starts with wins (리액트네이티브 over 리액트). An empty
# technology is a name none here has: JavaScript, so that 자바스크립트 is not read as 자바 (Java).
# fmt: off
SCRIPT_NAMES: dict[str, str] = {
    '자바스크립트': '', 'ジャバスクリプト': '',
    '에어플로우': 'airflow', 'アンドロイド': 'android', '安卓': 'android', '안드로이드': 'android', '앵귤러': 'angular',
    '앤서블': 'ansible', 'アルドゥイーノ': 'arduino', '아두이노': 'arduino', '바벨': 'babel', '부트스트랩': 'bootstrap',
    '크롬익스텐션': 'chrome-extension', '크롬확장프로그램': 'chrome-extension', '클라우드포메이션': 'cloudformation',
    '씨쁠쁠': 'cpp', '씨플플': 'cpp', 'シーシャープ': 'csharp', '씨샵': 'csharp', '씨샾': 'csharp', '쿠다': 'cuda',
    '다트': 'dart', 'ジャンゴ': 'django', '장고': 'django', 'ドッカー': 'docker', '도커': 'docker',
    'ドルーパル': 'drupal', '드루팔': 'drupal', 'エラスティックサーチ': 'elasticsearch', '엘라스틱서치': 'elasticsearch',
    '일렉트론': 'electron', '엘릭서': 'elixir', '엔티티프레임워크': 'entity-framework', '얼랭': 'erlang',
    'エクセルマクロ': 'excel-vba', '엑셀매크로': 'excel-vba', '익스프레스': 'express', '파이어베이스': 'firebase',
    '플라스크': 'flask', 'フラッター': 'flutter', '플러터': 'flutter', 'フォートラン': 'fortran', '포트란': 'fortran',
    '깃허브액션': 'github-actions', '깃헙액션': 'github-actions', '고랭': 'go', '고도엔진': 'godot',
    '구글앱스스크립트': 'google-apps-script', '그라파나': 'grafana', '鴻蒙': 'harmonyos', '鸿蒙': 'harmonyos',
    '하스켈': 'haskell', '헬름': 'helm', '하이버네이트': 'hibernate', '抱抱脸': 'huggingface-transformers',
    '허깅페이스': 'huggingface-transformers', '이스티오': 'istio', '자바': 'java', '젠킨스': 'jenkins',
    '제스트': 'jest', '제트팩컴포즈': 'jetpack-compose', '젯팩컴포즈': 'jetpack-compose', 'ジェイクエリー': 'jquery',
    '제이쿼리': 'jquery', '제이유닛': 'junit', '주피터': 'jupyter', '주피터노트북': 'jupyter', '쥬피터노트북': 'jupyter',
    '카프카': 'kafka', '케라스': 'keras', 'コトリン': 'kotlin', '코틀린': 'kotlin', '쿠버네티스': 'kubernetes',
    '랭체인': 'langchain', '라라벨': 'laravel', '레이텍': 'latex', '루아': 'lua', 'マトラボ': 'matlab',
    '매트랩': 'matlab', '몽고디비': 'mongodb', '넷리파이': 'netlify', 'エンジンエックス': 'nginx', '엔진엑스': 'nginx',
    '넘파이': 'numpy', '넉스트': 'nuxt', '오픈텔레메트리': 'opentelemetry', '판다스': 'pandas',
    'ポスグレ': 'postgresql', 'ポストグレス': 'postgresql', '포스트그레스': 'postgresql', '포스트그레스큐엘': 'postgresql',
    'パワーシェル': 'powershell', '파워셸': 'powershell', '파워쉘': 'powershell', '프로메테우스': 'prometheus',
    '퍼피티어': 'puppeteer', '파이게임': 'pygame', 'パイソン': 'python', '파이선': 'python', '파이썬': 'python',
    '파이토치': 'pytorch', '래빗엠큐': 'rabbitmq', '레일즈': 'rails', '루비온레일즈': 'rails', '리액트': 'react',
    '리액트네이티브': 'react-native', '리액트라우터': 'react-router', '레디스': 'redis', '리덕스': 'redux',
    '루비': 'ruby', '러스트': 'rust', '사이킷런': 'scikit-learn', 'セレニウム': 'selenium', '셀레니움': 'selenium',
    'ソラナ': 'solana', '솔라나': 'solana', '솔리디티': 'solidity', '아파치스파크': 'spark', '스프링': 'spring-boot',
    '스프링부트': 'spring-boot', '스토리북': 'storybook', '스타일드컴포넌트': 'styled-components',
    '수파베이스': 'supabase', '스벨트': 'svelte', '스벨트킷': 'sveltekit', '스위프트': 'swift', '테일윈드': 'tailwind',
    '리액트쿼리': 'tanstack-query', '电报机器人': 'telegram-bot', '텔레그램봇': 'telegram-bot',
    'テンソルフロー': 'tensorflow', '텐서플로': 'tensorflow', '텐서플로우': 'tensorflow', 'テラフォーム': 'terraform',
    '테라폼': 'terraform', 'タイプスクリプト': 'typescript', '타입스크립트': 'typescript', 'ユニティ': 'unity',
    '유니티': 'unity', 'アンリアル': 'unreal', 'アンリアルエンジン': 'unreal', '虚幻引擎': 'unreal', '虛幻引擎': 'unreal',
    '언리얼': 'unreal', '언리얼엔진': 'unreal', '버셀': 'vercel', '뷰제이에스': 'vue', 'ウェブアセンブリ': 'webassembly',
    '웹어셈블리': 'webassembly', '웹팩': 'webpack', 'ワードプレス': 'wordpress', '워드프레스': 'wordpress',
    '주스탠드': 'zustand',
}
# fmt: on
SCRIPT_NAME_LONGEST = max(map(len, SCRIPT_NAMES))


def implied(written: list[Word]) -> list[tuple[str, tuple[str, ...], str]]:
    """(technology, its name terms, the signature as the text has it) for each technology one of
    whose signatures the text's words hold, or whose name a CJK word starts with, in the text's order."""
    texts = [word.text for word in written]
    tables = lookup()
    first = tables.get("first_words", (word.text for word in written if not word.cjk))
    starts = {
        position: _starting_at(texts, position, first[text]) for position, text in enumerate(texts) if text in first
    }
    found = tables.get("signatures", (signature for signatures in starts.values() for signature in signatures))
    out: list[tuple[str, tuple[str, ...], str]] = []
    for position, word in enumerate(written):
        at = _script_name(word.text) if word.cjk else _signatures_at(starts.get(position, []), found)
        for tech, signature in at:
            if all(tech != known for known, _, _ in out):
                out.append((tech, NAMES[tech], signature))
    return out


def in_code(text: str) -> list[tuple[str, tuple[str, ...], str]]:
    """(technology, its name terms, the identifier) for each technology an identifier the text
    writes as code implies (`CODE`: `on_delete`, `op.add_column`), in the text's order (a
    technology once per identifier: `route.anchors_of` keeps the first): its words are common
    ones, but joined as code they are that technology's."""
    identifiers = code_identifiers(text)
    code = lookup().get("code", identifiers)
    return [(tech, NAMES[tech], identifier) for identifier in identifiers for tech in code.get(identifier, ())]


def code_identifiers(text: str) -> list[str]:
    """The identifiers the text writes as code, lowercased, each with what follows each of its
    last CODE_PARTS joints (`self.op.add_column` also as `op.add_column` and `add_column`): no
    `CODE` entry has more parts, and a pasted chain of thousands would make as many long tails."""
    out = []
    for identifier in CODE_IDENTIFIER.findall(text):
        parts = CODE_JOINT.split(identifier.lower())[-(2 * CODE_PARTS - 1) :]
        out += ["".join(parts[start:]) for start in range(0, len(parts), 2)]
    return out


def renamed(written: list[Word]) -> list[tuple[str, tuple[str, ...], str]]:
    """(technology, its name terms that are no everyday word, the name as the text has it) for each
    technology the text names by a name that is none, in the text's order: `GMS 2` is GameMaker,
    whose memories say `gamemaker`; `spring` or `express` may be the season or a train, and a
    memory named `next-...` need not be about Next.js."""
    out: list[tuple[str, tuple[str, ...], str]] = []
    for word in written:
        term = word.terms[0]
        if len(word.terms) == 1 and len(term) > 2 and term not in EVERYDAY_NAMES:
            out += [
                (tech, tuple(name for name in NAMES[tech] if name not in EVERYDAY_NAMES), word.text)
                for tech in TECHNOLOGIES_NAMED.get(term, ())
            ]
    return out


def _names_index() -> dict[str, tuple[str, ...]]:
    """Per name term, the technologies named by it (`drf`: Django and its REST framework)."""
    index: dict[str, tuple[str, ...]] = {}
    for tech, names in NAMES.items():
        for name in names:
            index[name] = (*index.get(name, ()), tech)
    return index


TECHNOLOGIES_NAMED = _names_index()


def _starting_at(texts: list[str], position: int, longest: int) -> list[str]:
    """The signatures the words from ``position`` could make: one word, two, ... ``longest``."""
    out = [texts[position]]
    for end in range(position + 2, min(len(texts), position + longest) + 1):
        out.append(f"{out[-1]} {texts[end - 1]}")
    return out


def _signatures_at(starting: list[str], found: dict[str, tuple[str, ...]]) -> list[tuple[str, str]]:
    """(technology, signature) for each of the signatures a position starts that the table holds."""
    return [(tech, signature) for signature in starting for tech in found.get(signature, ())]


def _script_name(text: str) -> list[tuple[str, str]]:
    """[(technology, name)] for the longest name in SCRIPT_NAMES the CJK word starts with."""
    for size in range(min(len(text), SCRIPT_NAME_LONGEST), 1, -1):
        if (tech := SCRIPT_NAMES.get(text[:size])) is not None:
            return [(tech, text[:size])] if tech else []
    return []
