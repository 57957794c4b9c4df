"""Words of software writing in CJK and Vietnamese: what tells a developer's question from everyday text.

An English memory holds no Chinese or Vietnamese word, so in a question like "Python 读取文件时报错"
every CJK word is one no memory holds, as in "动物园新来了一条 Python（蟒蛇）". What differs is
whether those words are the words developers write (报错, コンポーネント, 에러, truy vấn). A task's
foreign words (`route.Anchor.foreign`: CJK words, and the marked words of a Vietnamese text) count
as unknown to the task decision (`match`) only when none of them is one of these (nor is held by a
memory) and the task has no more Latin words than a name. Both lists were written for engram by
helpers who saw neither the code nor any labelled task; CJK words the tokenizer would split were
left out or cut to their technical part (docs/routing.md). Stdlib only."""

from __future__ import annotations

import functools
import re
import unicodedata

from . import terms

MARKED_WORDS = 2  # words with Vietnamese marks that make a text Vietnamese
_SYLLABLE = re.compile(r"[^\W\d_]+")
LONGEST = 10  # characters of the longest word below
# fmt: off
WORDS = frozenset({
    # Chinese, simplified and traditional
    '並發', '中間件', '中间件', '主鍵', '主键', '乱码', '亂碼', '事件处理', '事件循环', '事件循環', '事件监听', '事件監聽',
    '事件處理', '二叉树', '二叉樹', '二进制', '二進位', '二進制', '介面', '代码', '代碼', '令牌', '优化', '传入', '传参',
    '伺服器', '佇列', '位元組', '作業系統', '作用域', '例外處理', '依賴', '依赖', '修复', '修復', '偵錯', '傳入', '傳參',
    '優化', '儲存庫', '儲存過程', '元件', '入参', '入參', '內存', '內核', '兼容', '内存', '内核', '写入', '函式',
    '函数', '函數', '分支', '初始化', '前端', '加密', '加載', '加载', '动态库', '動態庫', '包管理', '十六进制', '十六進位',
    '十六進制', '协程', '協程', '单例', '单测', '单页应用', '卡死', '卸載', '卸载', '原型鏈', '原型链', '原始碼', '参数',
    '參數', '变量', '叢集', '合併衝突', '合并冲突', '后端', '吞吐量', '启动', '告警', '命令列', '命令行', '命名空間',
    '命名空间', '哈希', '响应', '啟動', '單例', '單測', '單頁應用', '回传', '回傳', '回滚', '回滾', '回調', '回调',
    '固件', '型別', '域名', '執行', '堆栈', '堆疊', '報文', '報錯', '复现', '外掛', '外鍵', '外键', '多态', '多態',
    '套件', '套接字', '如何解决', '如何解決', '字串', '字元', '字段', '字符', '字节', '存储过程', '安装', '安裝', '宏任务',
    '宏任務', '定位問題', '定位问题', '实例', '实参', '实现', '实际结果', '客戶端', '客户端', '容器', '實作', '實例',
    '實參', '實現', '實際結果', '寫入', '导入', '导出', '封装', '封裝', '專案', '導入', '導出', '崩溃', '崩潰', '工具鏈',
    '工具链', '工程化', '布尔值', '布林值', '常數', '常量', '并发', '序列化', '建構子', '建置', '开发', '异常', '异步',
    '弹窗', '彈窗', '形参', '形參', '後端', '復現', '微任务', '微任務', '微服务', '微服務', '快取', '性能問題', '性能问题',
    '执行', '技术栈', '技術棧', '抓包', '报文', '报错', '持久化', '持續整合', '持續集成', '持续集成', '挂载', '授权',
    '授權', '排查', '掛載', '接口', '控制反轉', '控制反转', '控制台', '提交記錄', '提交记录', '插件', '操作系统', '数据',
    '数据库', '数据表', '数组', '整型', '數據', '數據庫', '數據表', '數組', '文件', '文档', '文檔', '断点', '断言',
    '斷言', '斷點', '日志', '日誌', '时间复杂度', '映像檔', '時間複雜度', '暂存区', '暫存區', '最佳化', '服务器', '服务端',
    '服務器', '服務端', '未定义', '未定義', '权限', '构建', '枚举', '枚舉', '查詢結果', '查詢語句', '查询结果', '查询语句',
    '标准库', '栈溢出', '框架', '構建', '標準庫', '標頭檔', '模块', '模塊', '模板', '模組', '檔案', '欄位', '權杖',
    '權限', '正则', '正則', '正規表示式', '死循环', '死循環', '死鎖', '死锁', '泛型', '注释', '流水線', '流水线', '测试',
    '浏览器', '浮点数', '浮點數', '消息队列', '消息隊列', '測試', '渲染', '源码', '源碼', '漏洞', '瀏覽器', '热更新',
    '熱更新', '版本', '物件', '状态码', '状态管理', '狀態碼', '狀態管理', '环境搭建', '環境搭建', '生产环境', '生命周期',
    '生命週期', '生成器', '生產環境', '用戶端', '異常', '異步', '目录', '目錄', '直譯器', '相依性', '相容性', '硬件',
    '硬體', '示例', '程序', '程式', '空值', '空指針', '空指针', '端口', '端点', '端點', '第三方库', '第三方庫', '算法',
    '类名', '类型转换', '索引', '終端', '組件', '結構體', '綁定', '維運', '網關', '線程', '編碼', '編程', '編譯',
    '編輯器', '緩存', '线程', '组件', '终端', '绑定', '结构体', '缓存', '编码', '编程', '编译', '编辑器', '缺陷',
    '网关', '联调', '聯調', '脚本', '腳本', '自动补全', '自動補全', '虚拟机', '虚拟环境', '虛擬機', '虛擬環境', '表单',
    '表單', '装饰器', '裝飾器', '覆盖率', '覆蓋率', '規避', '规避', '解决方案', '解密', '解析', '解決方案', '解码', '解碼',
    '解释器', '解釋器', '記憶體', '設定檔', '註解', '註釋', '認證', '調用', '調試', '請求', '警告信息', '警告訊息', '讀取',
    '變數', '變量', '认证', '读取', '调用', '调试', '負載均衡', '負載平衡', '資料庫', '資料結構', '資料表', '賦值', '负载均衡',
    '赋值', '超时', '超時', '跨域', '路径', '路徑', '路由', '跳轉', '跳转', '軟件', '軟體', '載入', '輸入框', '輸出',
    '软件', '载入', '输入框', '输出', '运维', '运行', '返回值', '进程', '远程仓库', '连接池', '迭代器', '迴圈', '递归',
    '連接池', '連結器', '進程', '逾時', '運維', '運行', '遍历', '遍歷', '遞歸', '遞迴', '遠程倉庫', '部署', '配置',
    '重构', '重構', '重现', '重現', '重載', '重载', '鉴权', '錯誤', '鏈接器', '鏈表', '鏡像', '鑑權', '链接器', '链表',
    '错误', '镜像', '長連接', '长连接', '閃退', '閉包', '開發', '閘道', '闪退', '闭包', '降級', '降级', '陣列', '除錯',
    '除错', '集群', '雜湊', '静态库', '静态方法', '靜態庫', '靜態方法', '非同步', '韌體', '響應', '項目', '預期結果',
    '預期行為', '類名', '類型轉換', '项目', '预期结果', '预期行为',
    # Japanese
    'アップグレード', 'アップデート', 'アノテーション', 'アプリケーション', 'アルゴリズム', 'アンマウント', 'アーキテクチャ', 'イシュー',
    'イテレータ', 'イベントリスナー', 'イベントループ', 'インシデント', 'インジェクション', 'インスタンス', 'インストール', 'インタフェース',
    'インタプリタ', 'インターフェイス', 'インターフェース', 'インテグレーション', 'インデックス', 'インデント', 'インフラ', 'インポート',
    'エクスポート', 'エスケープ', 'エラー', 'エンコーディング', 'エンコード', 'エンジニア', 'エンティティ', 'エンドポイント', 'オブジェクト',
    'オートスケール', 'オーバーフロー', 'オーバーライド', 'オーバーロード', 'オープンソース', 'カスタムフック', 'カバレッジ', 'カラム',
    'ガベージコレクション', 'ガベージコレクタ', 'キャッシュ', 'クエリ', 'クライアント', 'クラッシュ', 'クレデンシャル', 'クロージャ',
    'クローラー', 'ゲートウェイ', 'コネクションプール', 'コマンド', 'コミット', 'コメントアウト', 'コルーチン', 'コンストラクタ', 'コンソール',
    'コンテキスト', 'コンテナ', 'コンパイラ', 'コンパイル', 'コンフリクト', 'コンポーネント', 'コーディング', 'コードレビュー', 'コールバック',
    'サニタイズ', 'サンプルコード', 'サーバ', 'シリアライズ', 'シングルトン', 'シンボリックリンク', 'ジェネリクス', 'ジェネレータ', 'スキーマ',
    'スクリプト', 'スクレイピング', 'スタイルシート', 'スタック', 'スタッシュ', 'スタブ', 'ステージング', 'ステータスコード', 'ステート',
    'ストアドプロシージャ', 'ストレージ', 'スループット', 'スレッド', 'セッション', 'セマフォ', 'セレクタ', 'ソケット', 'ソフトウェア',
    'ソースコード', 'タイムアウト', 'ダウングレード', 'チュートリアル', 'ツールチェーン', 'テストケース', 'テストコード', 'テンプレート',
    'ディスパッチ', 'ディレクトリ', 'デコレータ', 'デコード', 'デザインパターン', 'デストラクタ', 'デッドロック', 'デバッガ', 'デバッグ',
    'デフォルト', 'デプロイ', 'データ', 'データバインディング', 'データベース', 'トランザクション', 'トランスパイル', 'トークン', 'ドキュメント',
    'ドメイン', 'ヌルポ', 'ネットワーク', 'ハイドレーション', 'ハッシュ', 'ハンドラ', 'ハードウェア', 'バイナリ', 'バインディング',
    'バグ', 'バックエンド', 'バリデーション', 'バンドラー', 'バージョン', 'パイプライン', 'パッケージマネージャ', 'パラメータ', 'パーサ',
    'パース', 'パーミッション', 'ヒープ', 'ビルド', 'ファイアウォール', 'ファイル', 'フェッチ', 'フォルダ', 'フォーマッタ', 'フレームワーク',
    'フロントエンド', 'ブラウザ', 'ブランチ', 'プラグイン', 'プルリク', 'プロキシ', 'プログラマ', 'プログラミング', 'プロセス', 'プロップス',
    'プロトコル', 'プロパティ', 'プロファイリング', 'ベンチマーク', 'ペイロード', 'ページネーション', 'ホットフィックス', 'ホットリロード',
    'ボトルネック', 'ポインタ', 'ポリフィル', 'ポリモーフィズム', 'マイクロサービス', 'マイグレーション', 'マークアップ', 'マージ', 'ミドルウェア',
    'ミューテックス', 'ミューテーション', 'メソッド', 'メトリクス', 'メモリ', 'メモリリーク', 'モジュール', 'モニタリング', 'ユニットテスト',
    'ユーザ', 'ライフサイクル', 'ライブラリ', 'ラムダ', 'ランタイム', 'リクエスト', 'リソース', 'リデューサー', 'リファクタ', 'リファレンス',
    'リベース', 'リポジトリ', 'リリースノート', 'リンター', 'ルーター', 'ルーティング', 'レイテンシ', 'レスポンシブ', 'レスポンス',
    'レンダリング', 'ログレベル', 'ロードバランサ', 'ロールバック', 'ワークアラウンド', 'ワークフロー', 'ワーニング', '一意', '上書',
    '不具合', '並列', '乱数', '事象', '二分探索', '互換', '仕様', '代入', '仮想', '仮想化', '仮想環境', '例外', '依存性注入',
    '依存関係', '保守性', '保守運用', '修正', '値型', '値渡', '備忘録', '入力', '公開鍵', '共通化', '内部結合', '再帰',
    '再現', '冗長化', '冪等性', '処理', '出力', '列挙型', '初期値', '初期化', '前提条件', '動作', '単一責任', '単体',
    '参照', '反映', '取得', '可用性', '可読性', '名前空間', '命名規則', '回避策', '型付', '型変換', '型安全', '型推論',
    '型注釈', '基底', '基本設計', '変数', '変更履歴', '外部結合', '多態性', '妥当性', '子要素', '定数', '定義', '実行',
    '実装', '密結合', '工数', '差分', '引数', '強制終', '復号', '応答時間', '恒久対応', '押下', '抽象', '抽象化',
    '拡張性', '挙動', '採番', '接続', '描画', '改修', '改行', '整合性', '整数型', '文字列', '文字化', '新規作成', '既定値',
    '明示', '暗号化', '暗黙', '暫定対応', '最適化', '期待値', '木構造', '本番環境', '条件分岐', '条件式', '検証', '構文',
    '構築', '構造体', '権限', '機械語', '正常終', '正規化', '正規表現', '死活監視', '永続化', '派生', '浮動小数点', '添字',
    '演算', '状態管理', '生成', '異常終', '疎結合', '疎通確認', '発火', '発生', '直列化', '相対', '真偽値', '秘密鍵',
    '空文字', '空白文字', '管理画面', '絶対', '継承', '置換', '脆弱性', '表示', '補完', '要素数', '親要素', '解決',
    '計算量', '記載', '記述', '設定', '設計書', '詳細設計', '認証', '論理値', '負荷分散', '負荷試験', '責務', '起動',
    '送受信', '通信', '遅延', '運用保守', '運用監視', '遷移', '配列', '開発', '関数', '閾値', '障害対応', '雛形', '難読化',
    '非同期', '非推奨', '非活性', '高速化',
    # Korean
    '가비지컬렉션', '가비지컬렉터', '가상돔', '가상머신', '가상화', '가상환경', '개발', '개인키', '객체', '게이트웨이', '결과값',
    '경고메시지', '경쟁상태', '공개키', '공식문서', '교착상태', '구조체', '구현', '권한', '기대값', '기대결과', '기본값',
    '기본키', '깊이우선탐색', '너비우선탐색', '널값', '네임스페이스', '네트워크', '논리값', '다운그레이드', '다운타임', '다형성',
    '단위테스트', '데드락', '데몬', '데브옵스', '데이터바인딩', '데이터베이스', '데이터타입', '데코레이터', '도메인', '동기식',
    '동기화', '동작확인', '동적계획법', '동적타입', '들여쓰기', '디렉터리', '디렉토리', '디바운스', '디바운싱', '디버거', '디버깅',
    '디스패치', '디자인패턴', '디코딩', '디펜던시', '디플로이', '딕셔너리', '라우터', '라우팅', '라이브러리', '라이프사이클',
    '람다', '런타임', '레이스컨디션', '레이지로딩', '레이턴시', '레포지토리', '레플리케이션', '렌더', '렌더링', '로그레벨', '로깅',
    '로드밸런서', '로드밸런싱', '로직', '로컬환경', '롤백', '리다이렉트', '리듀서', '리디렉션', '리베이스', '리소스', '리턴',
    '리팩터링', '리팩토링', '리포지토리', '린터', '릴리스노트', '링커', '마운트', '마이그레이션', '마이크로서비스', '마크업',
    '매개변수', '멀티파트', '메모리', '메모이제이션', '메서드', '메소드', '메트릭', '명령어', '명세', '명시적', '모니터링',
    '모듈', '모킹', '무한루프', '문서화', '문자열', '문자형', '뮤텍스', '미들웨어', '바이너리', '바이트코드', '반복문', '반영',
    '반응형', '반환', '발생', '방화벽', '배열', '배치작업', '배포', '백로그', '백엔드', '버그', '버전', '버퍼', '번들러',
    '번들링', '벤치마크', '변수', '병합', '복호화', '부동소수점', '부모클래스', '분기문', '불리언', '브라우저', '브랜치',
    '브레이크포인트', '비동기', '비밀키', '비트연산', '빌드', '상대경로', '상태값', '상태관리', '상태코드', '샘플코드', '생명주기',
    '생성자', '샤딩', '서버', '선택자', '설정', '설치', '세그폴트', '세마포어', '셀렉터', '소멸자', '소스코드', '소켓',
    '소프트웨어', '스레드', '스로틀링', '스코프', '스크래핑', '스크립트', '스키마', '스태시', '스택트레이스', '스텁', '스테이징',
    '스테이트', '스토리지', '시간복잡도', '시간초과', '실수형', '실제결과', '실행', '심볼릭링크', '싱글톤', '쓰로틀링', '아키텍처',
    '알고리즘', '암시적', '암호화', '애노테이션', '애자일', '애플리케이션', '어노테이션', '어트리뷰트', '어플리케이션', '업그레이드',
    '업데이트', '에러', '에셋', '엔드포인트', '엔트리포인트', '엔티티', '엘리먼트', '연결리스트', '연동', '연산자', '열거형',
    '예상값', '예상결과', '예외', '예제', '오동작', '오류', '오버라이드', '오버라이딩', '오버로딩', '오버플로우', '오브젝트',
    '오케스트레이션', '오토스케일링', '오픈소스', '완전탐색', '외래키', '요구사항', '요청값', '요청헤더', '운영체제', '운영환경',
    '원인파악', '웹서비스', '웹앱', '유닛테스트', '유효성', '응답값', '응답헤더', '의존성', '이벤트루프', '이벤트리스너', '이벤트버블링',
    '이벤트위임', '이슈트래킹', '이스케이프', '이진수', '이진탐색', '이진트리', '이터레이터', '익셉션', '익스포트', '인덱스',
    '인스턴스', '인스톨', '인자', '인젝션', '인증서', '인코딩', '인터페이스', '인터프리터', '인프라', '읽기전용', '임포트',
    '입력값', '자료구조', '자료형', '자식클래스', '장애대응', '재귀', '재사용성', '재현', '저장소', '저장프로시저', '전역상태',
    '절대경로', '접근제어자', '접근제한자', '정규식', '정규표현식', '정규화', '정상동작', '정수형', '정적분석', '정적타입', '제너레이터',
    '제네릭', '제어문', '조건문', '조인', '종속성', '주석', '주소값', '중단점', '지속적통합', '지연로딩', '직렬화', '진입점',
    '참조', '처리량', '청크', '체리픽', '초기화', '최적화', '추상클래스', '추상화', '출력', '취약점', '치환', '캐시',
    '캐싱', '캡슐화', '커넥션', '커맨드', '커밋', '커버리지', '커스텀훅', '컨테이너', '컨플릭트', '컬럼', '컴파일', '컴파일러',
    '컴포넌트', '코드리뷰', '코드수정', '코딩', '코루틴', '코어덤프', '콘솔', '콜백', '쿼리', '크래시', '크로스사이트', '크론잡',
    '크롤링', '클라이언트', '클래스명', '클래스상속', '클러스터', '클로저', '타임아웃', '타입정의', '타입체크', '타입추론', '타입캐스팅',
    '테스트케이스', '테스트코드', '템플릿', '토큰', '튜토리얼', '튜플', '트랜스파일', '트랜잭션', '트러블슈팅', '트리구조', '파라미터',
    '파싱', '파이프라인', '파일', '패키지관리자', '패키지매니저', '퍼미션', '페이로드', '페이지네이션', '포매터', '포인터', '포트번호',
    '폴더', '폴리필', '폼데이터', '표준입력', '풀리퀘', '풀스택', '프런트엔드', '프레임워크', '프로그래머', '프로그래밍', '프로덕션',
    '프로세스', '프로젝트', '프로토콜', '프로파일링', '프로퍼티', '프록시', '프론트엔드', '프롬프트', '프롭스', '플러그인', '플렉스박스',
    '하드웨어', '하이드레이션', '한글깨짐', '할당', '함수', '핫리로드', '핫픽스', '해결', '해시값', '해시맵', '해싱', '핸들러',
    '핸들링', '형변환', '형상관리', '호스팅', '호이스팅', '호출', '호환', '환경구축',
})
# fmt: on
# Vietnamese phrases of software writing, lowercase with their marks, syllables space-separated.
# fmt: off
VIETNAMESE = frozenset({
    'bao đóng', 'biên dịch', 'biên dịch lại', 'biến cục bộ', 'biến môi trường', 'biến toàn cục',
    'biểu thức', 'biểu thức chính quy', 'báo lỗi', 'băm mật khẩu', 'bản vá', 'bảng băm',
    'bảng dữ liệu', 'bất đồng bộ', 'bắt ngoại lệ', 'bắt sự kiện', 'bộ chọn', 'bộ dữ liệu',
    'bộ nhớ đệm', 'bộ đệm', 'bộ định tuyến', 'ca kiểm thử', 'chuẩn hóa dữ liệu', 'chuỗi ký tự',
    'chuỗi rỗng', 'chuỗi truy vấn', 'chưa được định nghĩa', 'chạy lệnh', 'chạy mã', 'chỉ mục',
    'chứng chỉ bảo mật', 'con trỏ', 'con trỏ rỗng', 'cài gói', 'cài thư viện', 'cài đặt',
    'cân bằng tải', 'câu lệnh', 'câu truy vấn', 'câu điều kiện', 'cây nhị phân', 'cú pháp',
    'cơ sở dữ liệu', 'cấp phát bộ nhớ', 'cấp phát động', 'cấu hình máy chủ', 'cấu hình môi trường',
    'cấu trúc dữ liệu', 'cửa sổ dòng lệnh', 'danh sách liên kết', 'di chuyển dữ liệu', 'duyệt mảng',
    'dòng lệnh', 'dòng mã', 'dấu chấm phẩy', 'dấu ngoặc nhọn', 'dấu phẩy động', 'dịch vụ web',
    'dữ liệu huấn luyện', 'dữ liệu đầu vào', 'ghi đè', 'giao diện bị vỡ', 'giao diện dòng lệnh',
    'giao diện lập trình', 'giao diện người dùng', 'giao diện web', 'giao thức', 'giá trị mặc định',
    'giá trị rỗng', 'giá trị trả về', 'giải phóng bộ nhớ', 'giải thuật', 'giải tuần tự hóa',
    'gán giá trị', 'gói phụ thuộc', 'gói tin', 'gõ lệnh', 'gọi hàm', 'gộp nhánh', 'gỡ cài đặt',
    'gỡ lỗi', 'hiệu năng', 'huấn luyện mô hình', 'hàm', 'hàm băm', 'hàm bất đồng bộ', 'hàm gọi lại',
    'hàm khởi tạo', 'hàm lồng nhau', 'hàm mũi tên', 'hàm thuần túy', 'hàm tiện ích', 'hàm tạo',
    'hàm xử lý', 'hàm đệ quy', 'hàm ẩn danh', 'hàng đợi', 'hướng đối tượng', 'hằng số',
    'hệ thống nhúng', 'hệ thống phân tán', 'học máy', 'hợp ngữ', 'hợp nhất nhánh', 'in ra màn hình',
    'khai báo biến', 'kho lưu trữ', 'kho mã', 'khoảng trắng', 'khóa chính', 'khóa ngoại',
    'khối lệnh', 'khối mã', 'khởi chạy', 'khởi tạo', 'kiến trúc phần mềm', 'kiểm soát phiên bản',
    'kiểm thử', 'kiểm thử tích hợp', 'kiểm thử đơn vị', 'kiểu dữ liệu', 'kiểu trả về',
    'kiểu tổng quát', 'kéo thả', 'ký tự xuống dòng', 'kế thừa', 'kết quả trả về', 'kết xuất',
    'kỹ sư phần mềm', 'luồng công việc', 'luồng dữ liệu', 'luồng xử lý', 'lùi phiên bản', 'lưu đệm',
    'lược đồ', 'lập trình', 'lập trình hàm', 'lập trình nhúng', 'lập trình viên', 'lập trình web',
    'lắng nghe sự kiện', 'lặp qua', 'lặp vô hạn', 'lọc dữ liệu', 'lỗ hổng bảo mật', 'lỗi biên dịch',
    'lỗi cú pháp', 'lỗi phân đoạn', 'lớp cha', 'lớp con', 'lớp cơ sở', 'lớp dẫn xuất',
    'lớp kế thừa', 'lớp trừu tượng', 'lời gọi hàm', 'máy chủ', 'máy chủ web', 'máy chủ đám mây',
    'máy chủ ảo', 'máy khách', 'máy ảo', 'mã giả', 'mã hóa', 'mã hóa ký tự', 'mã hóa mật khẩu',
    'mã máy', 'mã nguồn', 'mã nguồn mở', 'mã nhị phân', 'mã sạch', 'mã thông báo', 'mã trạng thái',
    'mã độc', 'mô đun', 'môi trường phát triển', 'môi trường sản phẩm', 'môi trường thử nghiệm',
    'môi trường ảo', 'mạng nơ ron', 'mạng nội bộ', 'mảng hai chiều', 'mảng rỗng', 'ngoại lệ',
    'ngoặc nhọn', 'nguồn mở', 'ngôn ngữ kịch bản', 'ngôn ngữ lập trình', 'ngăn xếp',
    'nhập thư viện', 'nhật ký lỗi', 'nhị phân', 'ném ngoại lệ', 'nạp chồng', 'phiên đăng nhập',
    'phát triển phần mềm', 'phát triển web', 'phân giải tên miền', 'phân quyền', 'phân trang',
    'phân tích cú pháp', 'phép gán', 'phía máy chủ', 'phía máy khách', 'phương thức tĩnh',
    'phạm vi biến', 'phần mềm trung gian', 'phần tử', 'phần tử mảng', 'quy ước đặt tên',
    'quản lý phiên bản', 'quản trị hệ thống', 'rò rỉ bộ nhớ', 'sắp xếp nổi bọt', 'số nguyên',
    'tham chiếu', 'tham chiếu rỗng', 'tham số', 'tham số cấu hình', 'tham số mặc định',
    'tham số truy vấn', 'thiết kế đáp ứng', 'thuật toán', 'thuật toán sắp xếp', 'thuộc tính',
    'thông báo lỗi', 'thông báo đẩy', 'thông dịch', 'thư mục', 'thư viện', 'thư viện chuẩn',
    'thư viện phụ thuộc', 'thư viện đồ họa', 'thập lục phân', 'thị giác máy tính', 'thụt lề',
    'thủ tục lưu trữ', 'tiêm phụ thuộc', 'tiến trình', 'toán tử', 'toán tử ba ngôi', 'triển khai',
    'triển khai liên tục', 'truy vấn', 'truy vấn chậm', 'truy vấn dữ liệu', 'truy xuất',
    'truy xuất dữ liệu', 'truyền tham số', 'tràn bộ nhớ', 'tràn bộ đệm', 'tràn ngăn xếp', 'tràn số',
    'trình biên dịch', 'trình duyệt', 'trình giả lập', 'trình gỡ lỗi', 'trình quản lý gói',
    'trình soạn thảo', 'trình thông dịch', 'trình điều khiển', 'trường hợp kiểm thử',
    'trả về giá trị', 'tuần tự hóa', 'tài liệu chính thức', 'tác vụ', 'tác vụ nền',
    'tái sử dụng mã', 'tên miền', 'tìm kiếm nhị phân', 'tích hợp liên tục', 'tương thích ngược',
    'tường lửa', 'tạo nhánh', 'tập dữ liệu', 'tập lệnh', 'tập tin', 'tập tin cấu hình',
    'tệp cấu hình', 'tệp nhật ký', 'tệp tin', 'tối ưu', 'tối ưu hóa', 'vi dịch vụ', 'vi điều khiển',
    'viết mã', 'vá lỗi', 'vòng lặp', 'vòng lặp lồng nhau', 'vòng lặp vô hạn', 'vùng chứa',
    'vỡ giao diện', 'xung đột mã', 'xác thực', 'xử lý lỗi', 'xử lý ngoại lệ', 'xử lý song song',
    'xử lý sự kiện', 'yêu cầu hợp nhất', 'ép kiểu', 'đa hình', 'đa kế thừa', 'đa luồng',
    'đa nền tảng', 'điều kiện dừng', 'điểm ngắt', 'điện toán đám mây', 'đoạn mã', 'đánh giá mã',
    'đóng góp mã', 'đường dẫn tuyệt đối', 'đường dẫn tương đối', 'đẩy mã', 'đặt tên biến', 'đệ quy',
    'định dạng', 'định tuyến', 'đối số', 'đối tượng', 'độ bao phủ mã', 'độ phức tạp', 'độ trễ',
    'ảo hóa', 'ứng dụng', 'ứng dụng web',
})
# fmt: on
LONGEST_PHRASE = max(phrase.count(" ") + 1 for phrase in VIETNAMESE)


def foreign_words(text: str) -> dict[str, bool]:
    """The task's Vietnamese words, folded as `terms.words` folds them, and whether each is in a
    phrase of software writing; none unless several words carry Vietnamese marks or several are
    Vietnamese typed without them (`terms.PLAIN_VIETNAMESE`; a café in an English sentence is no
    Vietnamese text). Phrases match with their marks, or without them in text typed plainly."""
    syllables = _SYLLABLE.findall(unicodedata.normalize("NFC", text.lower()))
    marked = [s for s in syllables if not s.isascii() and not terms.has_cjk(s)]
    plainly = len(set(syllables) & terms.PLAIN_VIETNAMESE) >= terms.PLAIN_VIETNAMESE_WORDS
    if len(marked) < MARKED_WORDS and not plainly:
        return {}
    software = _software_positions(syllables, VIETNAMESE)
    if plainly:
        software |= _software_positions([terms.fold(s) for s in syllables], _folded_phrases())
    vietnamese = {
        position for position, syllable in enumerate(syllables)
        if not syllable.isascii() or position in software or syllable in terms.PLAIN_VIETNAMESE
    }  # fmt: skip
    out: dict[str, bool] = {}
    for position in sorted(vietnamese):
        folded = terms.fold(syllables[position])
        out[folded] = out.get(folded, False) or position in software
    # a word also written plainly is the English one too: "Go" beside "gỡ lỗi" stays a name
    english = {syllable for position, syllable in enumerate(syllables) if position not in vietnamese}
    return {folded: software_word for folded, software_word in out.items() if folded not in english}


def _software_positions(syllables: list[str], phrases: frozenset[str]) -> set[int]:
    """The positions of the syllables that are part of one of the phrases."""
    return {
        position + offset
        for size in range(1, LONGEST_PHRASE + 1)
        for position in range(len(syllables) - size + 1)
        if " ".join(syllables[position : position + size]) in phrases
        for offset in range(size)
    }


@functools.cache
def _folded_phrases() -> frozenset[str]:
    return frozenset(map(terms.fold, VIETNAMESE))


def holds_one(text: str) -> bool:
    """Whether a CJK word (a run as `terms.words` cuts it) holds a word of software writing."""
    return any(
        text[start : start + size] in WORDS
        for size in range(2, min(LONGEST, len(text)) + 1)
        for start in range(len(text) - size + 1)
    )
